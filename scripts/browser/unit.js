// Unit tests of upgate.js's pure parts, run inside Chromium by browser.py (the page at biz-server's
// origin gives WebCrypto, IndexedDB and the module itself). Expected hashes come from Python: the
// official SDK's qiniu.etag, hashlib.md5 and the harness's independent v2 hash of the same files.
import {
  backoffDelay, checkpointKey, etag, isRetryable, md5Hex, multipartHash, tokenPolicy, urlsafeBase64, CheckpointStore,
} from "/upgate.js";

async function run(files, expected) {
  const results = [];
  const check = (name, ok, detail = "") => results.push([name, Boolean(ok), String(detail)]);

  for (const file of files) {
    const want = expected[file.name];
    const got = await etag(file);
    check(`etag of ${file.name} (${file.size} B) = qiniu.etag`, got === want.etag, `${got} vs ${want.etag}`);
    const md5 = md5Hex(await file.arrayBuffer());
    check(`md5 of ${file.name} = hashlib.md5`, md5 === want.md5, `${md5} vs ${want.md5}`);
    if (want.v2) {
      const v2 = await multipartHash(file, 5 << 20);
      check(`v2 hash of ${file.name} in 5 MiB parts = §7.2`, v2 === want.v2, `${v2} vs ${want.v2}`);
      check(`v2 hash in 4 MiB parts is the etag`, (await multipartHash(file, 4 << 20)) === want.etag);
    }
  }

  // Backoff: grows, capped, jittered within [base/4, ceiling], never all equal.
  const at = (attempt, r) => backoffDelay(attempt, { base: 500, max: 8000, random: () => r });
  check("backoff grows exponentially", at(0, 1) === 500 && at(1, 1) === 1000 && at(3, 1) === 4000);
  check("backoff is capped", at(10, 1) === 8000 && at(50, 1) === 8000);
  check("backoff has a floor", at(5, 0) === 125);
  const draws = new Set(Array.from({ length: 50 }, () => backoffDelay(4)));
  check("backoff is jittered", draws.size > 10 && [...draws].every((d) => d >= 125 && d <= 8000), [...draws].length);

  // What is retried: network errors and 5xx but 579; never 4xx, 612, 614.
  const retried = [0, 500, 502, 503, 599].every(isRetryable);
  const final = [400, 401, 403, 404, 413, 579, 612, 614, 631, 701].every((s) => !isRetryable(s));
  check("retry table", retried && final);

  // The resume record's key: the file's identity and where it goes, all five parts matter.
  const f = { name: "a.bin", size: 10, lastModified: 1 };
  const base = checkpointKey(f, "demo/a.bin", "demo");
  const variants = [
    checkpointKey({ ...f, name: "b.bin" }, "demo/a.bin", "demo"), checkpointKey({ ...f, size: 11 }, "demo/a.bin", "demo"),
    checkpointKey({ ...f, lastModified: 2 }, "demo/a.bin", "demo"), checkpointKey(f, "demo/b.bin", "demo"),
    checkpointKey(f, "demo/a.bin", "other"),
  ];
  check("checkpoint key is stable", base === checkpointKey({ ...f }, "demo/a.bin", "demo"));
  check("checkpoint key changes with each part", new Set([base, ...variants]).size === 6);

  // IndexedDB round trip and delete.
  const store = new CheckpointStore("upgate-unit");
  await store.put(base, { uploadId: "u", parts: { 1: "e" } });
  const back = await store.get(base);
  await store.delete(base);
  check("checkpoint store keeps and forgets", back?.parts?.[1] === "e" && (await store.get(base)) === undefined);

  // Base64 and the token's policy.
  check("urlsafe base64 of a unicode key", urlsafeBase64("демо/ключ?.bin") === expected.unicodeKeyB64, urlsafeBase64("демо/ключ?.bin"));
  const policy = { scope: "demo:demo/", deadline: 1 };
  const token = "ak:sig:" + urlsafeBase64(JSON.stringify(policy));
  check("token policy decodes", tokenPolicy(token).scope === "demo:demo/");
  return results;
}

window.upgateUnit = { run };
