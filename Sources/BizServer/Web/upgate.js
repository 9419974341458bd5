// upgate.js — upload files from a browser to an Upgate (or Qiniu Kodo) up server.
//
// One ES module, no build step, no dependencies. Served by biz-server at GET /upgate.js.
//
//   import { Uploader } from "/upgate.js";
//   const up = new Uploader({ tokenURL: "/v1/uptoken", auth: async () => "Bearer dev-api-key" });
//   const task = up.upload(file, { key: "demo/a.bin", vars: { "x:color": "red" } });
//   task.onprogress = ({ loaded, total, speed, eta }) => { ... };
//   task.pause(); task.resume(); await task.abort();
//   const { key, hash, reply } = await task.done;
//
// How it works (wire format: docs/PROTOCOL.md §5 v2 multipart, §6 form upload, §7 hashes):
// - it asks tokenURL for an UpToken for the key (POST, JSON {key, fname, fsize, vars}, the
//   Authorization header from `auth()`), and again before the token's deadline or on a 401;
// - files up to `multipartThreshold` go in one form POST; larger ones as v2 multipart: init,
//   `concurrency` parts of `partSize` in flight, each with its hex Content-MD5, then complete;
// - network errors, stalls and 5xx are retried with exponential backoff and full jitter; 4xx,
//   579 (stored, callback failed), 612 (no such uploadId) and 614 (file exists) are not;
// - every finished part is written to IndexedDB under (name, size, lastModified, key, bucket),
//   so the same file resumes after a reload or a crash; the record goes on success or on 612;
// - the hash the server answers is compared with one computed here with WebCrypto SHA-1,
//   4 MiB at a time (the file is never held in memory whole).

/** Qiniu's block: the unit of the etag (docs/PROTOCOL.md §7). */
export const BLOCK_SIZE = 4 << 20;

/** An upload that failed for good: `status` is the HTTP status (0: network), `body` the answer. */
export class UploadError extends Error {
  constructor(message, { status = 0, body = null, reqid = "" } = {}) {
    super(message);
    this.name = "UploadError";
    this.status = status;
    this.body = body;
    this.reqid = reqid;
  }
}

// ---------------------------------------------------------------------------------------------
// Pure helpers (exported for the unit tests)

/** Whether a failed request may be tried again: network errors (0), timeouts and 5xx, except
 *  579 (the object is stored; only the callback failed). 4xx and 6xx (612, 614) are final. */
export function isRetryable(status) {
  return status === 0 || (status >= 500 && status <= 599 && status !== 579);
}

/** Milliseconds to wait before retry number `attempt` (0-based): exponential from `base`,
 *  capped at `max`, with "full jitter" (uniform in [0, delay]) so that many clients that failed
 *  together do not come back together; never below base / 4. */
export function backoffDelay(attempt, { base = 500, max = 8000, random = Math.random } = {}) {
  const ceiling = Math.min(max, base * 2 ** attempt);
  return Math.max(base / 4, Math.round(ceiling * random()));
}

/** The IndexedDB key of a file's resume record: the file's identity plus where it goes. */
export function checkpointKey(file, key, bucket) {
  return JSON.stringify(["upgate-v1", file.name, file.size, file.lastModified, key ?? null, bucket]);
}

/** URL-safe base64 with padding (docs/PROTOCOL.md conventions) of bytes or a UTF-8 string. */
export function urlsafeBase64(input) {
  const bytes = typeof input === "string" ? new TextEncoder().encode(input) : new Uint8Array(input);
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_");
}

/** The PutPolicy inside an UpToken (`AK:sign:B64(policy)`), e.g. to read its scope. */
export function tokenPolicy(uptoken) {
  const encoded = uptoken.split(":")[2] ?? "";
  const binary = atob(encoded.replace(/-/g, "+").replace(/_/g, "/"));
  return JSON.parse(new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0))));
}

async function sha1(data) {
  return new Uint8Array(await crypto.subtle.digest("SHA-1", data));
}

function concat(chunks) {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) { out.set(c, at); at += c.length; }
  return out;
}

/** SHA-1 of each 4 MiB block of `blob[start, end)`, read one block at a time. */
async function blockDigests(blob, start, end) {
  const digests = [];
  for (let at = start; at < end || digests.length === 0; at += BLOCK_SIZE) {
    digests.push(await sha1(await blob.slice(at, Math.min(end, at + BLOCK_SIZE)).arrayBuffer()));
  }
  return digests;
}

function etagFromBlockDigests(digests) {
  if (digests.length === 1) return urlsafeBase64(concat([Uint8Array.of(0x16), digests[0]]));
  return sha1(concat(digests)).then((d) => urlsafeBase64(concat([Uint8Array.of(0x96), d])));
}

/** Qiniu's etag of a Blob (docs/PROTOCOL.md §7): what the server's `hash` must be for a form
 *  upload or for v2 parts of 4 MiB. Reads 4 MiB at a time. */
export async function etag(blob) {
  return etagFromBlockDigests(await blockDigests(blob, 0, blob.size));
}

/** The `hash` of `blob` uploaded as v2 parts of `partSize` (docs/PROTOCOL.md §7): the etag when
 *  the parts are the 4 MiB layout, else `B64(0x9e ‖ SHA1(d1 ‖ d2 ‖ …))`. */
export async function multipartHash(blob, partSize) {
  const parts = Math.max(1, Math.ceil(blob.size / partSize));
  const isBlockLayout = partSize === BLOCK_SIZE || (parts === 1 && blob.size <= BLOCK_SIZE);
  if (isBlockLayout) return etag(blob);
  const digests = [];
  for (let n = 0; n < parts; n++) {
    const start = n * partSize, end = Math.min(blob.size, start + partSize);
    const blocks = await blockDigests(blob, start, end);
    digests.push(end - start <= BLOCK_SIZE ? blocks[0] : await sha1(concat(blocks)));
  }
  return urlsafeBase64(concat([Uint8Array.of(0x9e), await sha1(concat(digests))]));
}

// MD5 (RFC 1321), for the Content-MD5 of each part: WebCrypto has no MD5.
const MD5_SHIFT = [7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21];
const MD5_K = Array.from({ length: 64 }, (_, i) => Math.floor(Math.abs(Math.sin(i + 1)) * 2 ** 32) | 0);

/** Lower-case hex MD5 of bytes (what qiniu SDKs send as a part's Content-MD5). */
export function md5Hex(input) {
  const bytes = new Uint8Array(input);
  const padded = new Uint8Array(((bytes.length + 72) >>> 6) << 6);
  padded.set(bytes);
  padded[bytes.length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, (bytes.length * 8) >>> 0, true);
  view.setUint32(padded.length - 4, Math.floor(bytes.length / 2 ** 29), true);
  let a0 = 0x67452301, b0 = 0xefcdab89 | 0, c0 = 0x98badcfe | 0, d0 = 0x10325476;
  // Words in the platform's order: every browser engine runs little-endian, as MD5 wants.
  const words = new Int32Array(padded.buffer);
  for (let w = 0; w < words.length; w += 16) {
    let a = a0, b = b0, c = c0, d = d0;
    for (let i = 0; i < 64; i++) {
      let f, g;
      if (i < 16) { f = (b & c) | (~b & d); g = i; }
      else if (i < 32) { f = (d & b) | (~d & c); g = (5 * i + 1) & 15; }
      else if (i < 48) { f = b ^ c ^ d; g = (3 * i + 5) & 15; }
      else { f = c ^ (b | ~d); g = (7 * i) & 15; }
      const sum = (a + f + MD5_K[i] + words[w + g]) | 0;
      const s = MD5_SHIFT[(i >> 4) * 4 + (i & 3)];
      a = d; d = c; c = b;
      b = (b + ((sum << s) | (sum >>> (32 - s)))) | 0;
    }
    a0 = (a0 + a) | 0; b0 = (b0 + b) | 0; c0 = (c0 + c) | 0; d0 = (d0 + d) | 0;
  }
  const out = new DataView(new ArrayBuffer(16));
  [a0, b0, c0, d0].forEach((w, i) => out.setInt32(4 * i, w, true));
  return Array.from(new Uint8Array(out.buffer), (x) => x.toString(16).padStart(2, "0")).join("");
}

/** Bytes per second over the last `window` ms of (time, bytes) samples. */
export class SpeedMeter {
  constructor(window = 3000) { this.window = window; this.samples = []; }
  add(bytes, now = performance.now()) {
    this.samples.push([now, bytes]);
    while (this.samples.length > 2 && now - this.samples[0][0] > this.window) this.samples.shift();
  }
  get speed() {
    if (this.samples.length < 2) return 0;
    const [t0] = this.samples[0], [t1] = this.samples[this.samples.length - 1];
    const bytes = this.samples.slice(1).reduce((n, [, b]) => n + b, 0);
    return t1 > t0 ? (bytes * 1000) / (t1 - t0) : 0;
  }
}

// ---------------------------------------------------------------------------------------------
// Resume records in IndexedDB (memory when IndexedDB is unavailable)

/** Where resume records live: one IndexedDB object store `checkpoints` in database `upgate`. */
export class CheckpointStore {
  constructor(name = "upgate") { this.name = name; this.memory = new Map(); this.db = null; }

  open() {
    if (this.db) return this.db;
    this.db = new Promise((resolve) => {
      if (typeof indexedDB === "undefined") return resolve(null);
      const request = indexedDB.open(this.name, 1);
      request.onupgradeneeded = () => request.result.createObjectStore("checkpoints");
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => resolve(null);
    });
    return this.db;
  }

  async run(mode, action) {
    const db = await this.open();
    if (!db) return action(null);
    return new Promise((resolve, reject) => {
      const request = action(db.transaction("checkpoints", mode).objectStore("checkpoints"));
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
  }

  async get(key) { return (await this.run("readonly", (s) => (s ? s.get(key) : null))) ?? this.memory.get(key); }
  async put(key, value) {
    this.memory.set(key, value);
    await this.run("readwrite", (s) => (s ? s.put(value, key) : null));
  }
  async delete(key) {
    this.memory.delete(key);
    await this.run("readwrite", (s) => (s ? s.delete(key) : null));
  }
}

// ---------------------------------------------------------------------------------------------
// One HTTP request with upload progress, a stall timeout and cancellation

class Cancelled extends Error { constructor() { super("cancelled"); this.name = "AbortError"; } }

function send({ method, url, headers = {}, body = null, onsent = () => {}, stallMs, signal }) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Cancelled());
    const xhr = new XMLHttpRequest();
    let timer = 0, stalled = false;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => { stalled = true; xhr.abort(); }, stallMs);
    };
    const done = () => { clearTimeout(timer); signal?.removeEventListener("abort", cancel); };
    const cancel = () => xhr.abort();
    signal?.addEventListener("abort", cancel);
    xhr.open(method, url);
    for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value);
    xhr.upload.onprogress = (e) => { arm(); onsent(e.loaded); };
    xhr.onprogress = arm;
    xhr.onload = () => {
      done();
      let json = null;
      try { json = xhr.responseText ? JSON.parse(xhr.responseText) : null; } catch { json = null; }
      resolve({ status: xhr.status, json, text: xhr.responseText, reqid: xhr.getResponseHeader("X-Reqid") ?? "" });
    };
    xhr.onerror = () => { done(); resolve({ status: 0, json: null, text: "network error", reqid: "" }); };
    xhr.onabort = () => {
      done();
      if (stalled) resolve({ status: 0, json: null, text: `no progress for ${stallMs} ms`, reqid: "" });
      else reject(new Cancelled());
    };
    arm();
    xhr.send(body);
  });
}

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { signal?.removeEventListener("abort", stop); resolve(); }, ms);
    const stop = () => { clearTimeout(timer); reject(new Cancelled()); };
    if (signal?.aborted) return stop();
    signal?.addEventListener("abort", stop, { once: true });
  });
}


async function waitOnline(signal) {
  while (typeof navigator !== "undefined" && navigator.onLine === false) await sleep(250, signal);
}

// ---------------------------------------------------------------------------------------------
// Tokens: one per task, for its key; fetched again before the deadline and on a 401

class TokenSource {
  constructor(options, request) {
    this.options = options;
    this.request = request;
    this.current = null;
    this.fetchedAt = 0;
    this.pending = null;
    this.requests = 0;
  }

  /** A token that is not near its deadline (a quarter of its lifetime, at most 60 s, before). */
  async get() {
    if (this.current) {
      const deadline = this.current.expiresAt * 1000;
      const margin = Math.min(60_000, (deadline - this.fetchedAt) / 4);
      if (Date.now() < deadline - margin) return this.current;
    }
    return this.refresh();
  }

  /** A new token (one request however many parts ask at once). */
  refresh() {
    this.pending ??= this.fetch().finally(() => { this.pending = null; });
    return this.pending;
  }

  async fetch() {
    const { tokenURL, auth, retries, stallTimeout } = this.options;
    for (let attempt = 0; ; attempt++) {
      await waitOnline();
      const authorization = await auth();
      this.requests++;
      const r = await send({
        method: "POST", url: tokenURL, body: JSON.stringify(this.request), stallMs: stallTimeout,
        headers: { "Content-Type": "application/json", ...(authorization ? { Authorization: authorization } : {}) },
      });
      if (r.status === 200 && r.json?.uptoken) {
        this.current = r.json;
        this.fetchedAt = Date.now();
        return r.json;
      }
      if (!isRetryable(r.status) || attempt >= retries) {
        throw new UploadError(`token request failed (${r.status}): ${r.json?.error ?? r.text}`, {
          status: r.status, body: r.json, reqid: r.reqid });
      }
      await sleep(backoffDelay(attempt));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The uploader and its tasks

/** Uploads files with tokens from `tokenURL` (biz-server's `POST /v1/uptoken`).
 *
 *  Options: `tokenURL` (default "/v1/uptoken"; absolute when biz-server is on another origin),
 *  `auth` (async, returns the Authorization header value for tokenURL, e.g. "Bearer <key or
 *  JWT>"), `concurrency` (parts in flight, 3), `partSize` (4 MiB; 1 MiB…1 GiB),
 *  `multipartThreshold` (files up to this size go in one form POST; 4 MiB), `retries` (per
 *  request, 8), `stallTimeout` (ms without progress before a request is given up and retried,
 *  20000), `checkpoints` (a CheckpointStore). */
export class Uploader {
  constructor(options = {}) {
    this.options = {
      tokenURL: "/v1/uptoken", auth: async () => null, concurrency: 3, partSize: 4 << 20,
      multipartThreshold: 4 << 20, retries: 8, stallTimeout: 20_000, ...options,
    };
    const { partSize, concurrency } = this.options;
    if (!(partSize >= 1 << 20 && partSize <= 1 << 30)) throw new RangeError("partSize must be 1 MiB…1 GiB");
    if (!(concurrency >= 1)) throw new RangeError("concurrency must be at least 1");
    this.checkpoints = this.options.checkpoints ?? new CheckpointStore();
  }

  /** Starts uploading `file` (a File or Blob) under `key` (none: the token's saveKey names it)
   *  with the `x:` variables `vars`; returns its UploadTask. */
  upload(file, { key, vars = {} } = {}) {
    return new UploadTask(this, file, { key, vars });
  }
}

/** One file's upload. `done` settles with `{key, hash, reply}` (reply: what the server
 *  answered, for biz-server tokens the upload record) or an UploadError; `onprogress` gets
 *  `{loaded, total, speed, eta}` (bytes, bytes/s, seconds) as bytes are sent; `onstatechange`
 *  gets the new `state`: running, paused, done, failed or aborted. */
export class UploadTask {
  constructor(uploader, file, { key, vars }) {
    this.options = uploader.options;
    this.checkpoints = uploader.checkpoints;
    this.file = file;
    this.key = key ?? null;
    this.vars = vars;
    this.state = "running";
    this.onprogress = null;
    this.onstatechange = null;
    this.uploadId = null;
    /** What happened, for tests and curious pages: parts sent now, parts taken from a resume
     *  record, retries. `tokenRequests` counts the token fetches. */
    this.stats = { partsSent: 0, partsResumed: 0, retries: 0 };
    this.confirmed = 0;
    this.inflight = new Map();
    this.meter = new SpeedMeter();
    this.controller = new AbortController();
    this.waiters = [];
    const fname = file.name ?? "blob";
    this.tokens = new TokenSource(this.options, {
      ...(this.key !== null ? { key: this.key } : {}), fname, fsize: file.size,
      ...(Object.keys(vars).length ? { vars } : {}),
    });
    this.done = this.run();
    this.done.catch(() => {});
  }

  get tokenRequests() { return this.tokens.requests; }

  /** Stops sending; parts already stored stay (and stay in the resume record). */
  pause() {
    if (this.state !== "running") return;
    this.setState("paused");
    this.controller.abort();
    this.controller = new AbortController();
  }

  /** Continues a paused upload. */
  resume() {
    if (this.state !== "paused") return;
    this.setState("running");
    this.wake();
  }

  /** Stops for good: the server's parts are deleted (v2 abort), the resume record too; `done`
   *  rejects with an AbortError. */
  async abort() {
    if (["done", "failed", "aborted"].includes(this.state)) return;
    this.setState("aborted");
    this.controller.abort();
    this.wake();
    await this.done.catch(() => {});
    if (this.uploadId && this.token) {
      const t = await this.tokens.get().catch(() => this.token);
      await send({
        method: "DELETE", url: `${this.base(t)}/${this.uploadId}`, headers: { Authorization: `UpToken ${t.uptoken}` },
        stallMs: this.options.stallTimeout,
      }).catch(() => {});
    }
    if (this.checkpointKey) await this.checkpoints.delete(this.checkpointKey);
  }

  setState(state) {
    this.state = state;
    this.onstatechange?.(state);
  }

  wake() {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) (this.state === "aborted" ? w.reject(new Cancelled()) : w.resolve());
  }

  whenRunning() {
    if (this.state === "running") return Promise.resolve();
    if (this.state === "aborted") return Promise.reject(new Cancelled());
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  progress() {
    let loaded = this.confirmed;
    for (const bytes of this.inflight.values()) loaded += bytes;
    const total = this.file.size;
    loaded = Math.min(loaded, total);
    const speed = this.meter.speed;
    this.onprogress?.({ loaded, total, speed, eta: speed > 0 ? (total - loaded) / speed : Infinity });
  }

  sent(part, bytes) {
    const delta = bytes - (this.inflight.get(part) ?? 0);
    if (delta > 0) this.meter.add(delta);
    this.inflight.set(part, bytes);
    this.progress();
  }

  async run() {
    try {
      this.token = await this.tokens.get();
      if (this.state === "aborted") throw new Cancelled();
      const small = this.file.size <= this.options.multipartThreshold;
      const local = globalThis.crypto?.subtle
        ? (small ? etag(this.file) : multipartHash(this.file, this.options.partSize)) : Promise.resolve(null);
      local.catch(() => {});
      const reply = small ? await this.form() : await this.multipart();
      const hash = reply?.hash ?? null;
      const expected = await local;
      if (expected && hash && expected !== hash) {
        throw new UploadError(`hash mismatch: the server stored ${hash}, this file is ${expected}`, { body: reply });
      }
      this.confirmed = this.file.size;
      this.inflight.clear();
      this.progress();
      this.setState("done");
      return { key: reply?.key ?? this.key, hash, reply };
    } catch (error) {
      if (this.state !== "aborted") this.setState("failed");
      throw this.state === "aborted" ? Object.assign(new Cancelled(), { message: "upload aborted" }) : error;
    }
  }

  /** Runs `request(token, signal)` until it answers 2xx: waits while paused or offline, asks for a
   *  new token once on a 401, retries network errors and 5xx with backoff. */
  async withRetries(label, request) {
    let refreshed = false;
    for (let attempt = 0; ;) {
      await this.whenRunning();
      const signal = this.controller.signal;
      let r;
      try {
        await waitOnline(signal);
        r = await request(await this.tokens.get(), signal);
      } catch (error) {
        if (error instanceof Cancelled) continue;   // paused (waits above) or aborted (throws above)
        throw error;
      }
      if (r.status >= 200 && r.status < 300) return r;
      if (r.status === 401 && !refreshed) {
        refreshed = true;
        await this.tokens.refresh();
        continue;
      }
      if (!isRetryable(r.status) || attempt >= this.options.retries) {
        throw new UploadError(`${label} failed (${r.status}): ${r.json?.error ?? r.text}`, {
          status: r.status, body: r.json, reqid: r.reqid });
      }
      this.stats.retries++;
      await sleep(backoffDelay(attempt++), signal).catch(() => {});
    }
  }

  async form() {
    const r = await this.withRetries("form upload", (token, signal) => {
      const form = new FormData();
      form.append("token", token.uptoken);
      if (this.key !== null) form.append("key", this.key);
      for (const [name, value] of Object.entries(this.vars)) form.append(name, value);
      form.append("file", this.file, this.file.name ?? "blob");   // last: up-server streams it
      this.inflight.set(0, 0);
      return send({
        method: "POST", url: `${token.upHosts[0]}/`, body: form, signal, stallMs: this.options.stallTimeout,
        onsent: (bytes) => this.sent(0, Math.min(bytes, this.file.size)),
      });
    });
    return r.json;
  }

  /** `<up host>/buckets/<bucket>/objects/<B64 key | ~>/uploads` (docs/PROTOCOL.md §5). */
  base(token) {
    const key = this.key === null ? "~" : urlsafeBase64(this.key);
    return `${token.upHosts[0]}/buckets/${encodeURIComponent(token.bucket)}/objects/${key}/uploads`;
  }

  async multipart(fresh = false) {
    const { partSize, concurrency } = this.options;
    this.checkpointKey = checkpointKey(this.file, this.key, this.token.bucket);
    let record = fresh ? null : await this.checkpoints.get(this.checkpointKey);
    if (record && (record.partSize !== partSize || record.expireAt * 1000 < Date.now() + 3_600_000)) record = null;
    if (!record) {
      const r = await this.withRetries("multipart init", (token, signal) => send({
        method: "POST", url: this.base(token), headers: { Authorization: `UpToken ${token.uptoken}` }, signal,
        stallMs: this.options.stallTimeout,
      }));
      record = { uploadId: r.json.uploadId, expireAt: r.json.expireAt, partSize, parts: {} };
      await this.checkpoints.put(this.checkpointKey, record);
    }
    this.uploadId = record.uploadId;
    const count = Math.ceil(this.file.size / partSize);
    const sizeOf = (n) => Math.min(this.file.size, n * partSize) - (n - 1) * partSize;
    const queue = [];
    this.confirmed = 0;
    for (let n = 1; n <= count; n++) {
      if (record.parts[n]) { this.confirmed += sizeOf(n); this.stats.partsResumed++; } else queue.push(n);
    }
    this.progress();
    let failed = false;
    const worker = async () => {
      while (queue.length && !failed) {
        const n = queue.shift();
        try {
          record.parts[n] = await this.sendPart(n, (n - 1) * partSize, sizeOf(n));
        } catch (error) {
          failed = true;
          throw error;
        }
        await this.checkpoints.put(this.checkpointKey, record);
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(concurrency, queue.length) }, worker));
      const parts = Object.keys(record.parts).map(Number).sort((a, b) => a - b)
        .map((partNumber) => ({ partNumber, etag: record.parts[partNumber] }));
      const body = JSON.stringify({
        parts, fname: this.file.name ?? "blob", mimeType: this.file.type || null,
        customVars: Object.keys(this.vars).length ? this.vars : null, metadata: null,
      });
      const r = await this.withRetries("multipart complete", (token, signal) => send({
        method: "POST", url: `${this.base(token)}/${record.uploadId}`, body, signal, stallMs: this.options.stallTimeout,
        headers: { Authorization: `UpToken ${token.uptoken}`, "Content-Type": "application/json" },
      }));
      await this.checkpoints.delete(this.checkpointKey);
      return r.json;
    } catch (error) {
      if (error.status !== 612) throw error;
      // The server no longer knows this upload (expired, completed or aborted elsewhere).
      await this.checkpoints.delete(this.checkpointKey);
      if (fresh) throw error;
      this.uploadId = null;
      return this.multipart(true);
    }
  }

  async sendPart(n, start, size) {
    const body = await this.file.slice(start, start + size).arrayBuffer();
    const md5 = md5Hex(body);
    const r = await this.withRetries(`part ${n}`, (token, signal) => {
      this.inflight.set(n, 0);
      return send({
        method: "PUT", url: `${this.base(token)}/${this.uploadId}/${n}`, body, signal,
        stallMs: this.options.stallTimeout, onsent: (bytes) => this.sent(n, bytes),
        headers: {
          Authorization: `UpToken ${token.uptoken}`, "Content-Type": "application/octet-stream", "Content-MD5": md5,
        },
      }).catch((error) => { this.inflight.delete(n); this.progress(); throw error; });
    });
    this.inflight.delete(n);
    this.confirmed += size;
    this.stats.partsSent++;
    this.progress();
    return r.json.etag;
  }
}
