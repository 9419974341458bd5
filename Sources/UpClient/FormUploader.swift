import HTTPTransport
import NativeCrypto
import UpCore

/// One multipart/form-data `POST /` (qiniu-protocol.md §6), fields in the SDK's order: token,
/// key, crc32, x:…, x-qn-meta-…, file last. The body is built in memory, which is why
/// ``UploadClient`` uses form upload only for small files; the crc32 field and the local etag are
/// computed from those very bytes (one read of the file).
struct FormUploader: Sendable {
    let job: UploadJob

    /// Sends the file; returns the reply.
    func run() async throws(UploadError) -> UploadJob.Completion {
        let request = job.request
        let size = job.facts.size
        let content = try job.source.read(offset: 0, length: Int(size))
        let crc = CRC32.checksum(content)
        let etag = Etag.of(content)
        let boundary = (0..<32).map { _ in String(UInt8.random(in: 0...15), radix: 16) }.joined()
        let progressID = job.reporter.begin()
        let job = self.job
        let crcField = crc
        let outcome = try await job.sender.send(payload: size, completes: true) { host, token in
            var fields: [(String, String)] = [("token", token)]
            if let key = request.key { fields.append(("key", key)) }
            // Python omits crc32 when it is 0 (an empty file) (§6).
            if crcField != 0 { fields.append(("crc32", String(crcField))) }
            fields += request.sortedVariables.map { ($0.name, $0.value) }
            fields += request.sortedMetadata.map { ($0.name, $0.value) }
            let body = Self.body(
                fields: fields, fname: request.resolvedFname, mimeType: request.mimeType ?? "application/octet-stream",
                content: content, boundary: boundary)
            // Progress counts the file's bytes: the body sent minus the fields before the file.
            let contentStart = Int64(body.count) - size - Int64(Self.trailer(boundary).count)
            return TransportRequest(
                method: "POST", url: host + "/", headers: [("Content-Type", "multipart/form-data; boundary=" + boundary)],
                body: .bytes(body), timeout: job.timeout,
                progress: { @Sendable bytes in job.reporter.sent(progressID, bytes: min(max(0, bytes - contentStart), size)) })
        }
        job.reporter.end(progressID)
        switch outcome {
        case .success(let response):
            job.reporter.update(acknowledged: size, blocks: nil)
            return UploadJob.Completion(response: response, localEtag: etag, callbackFailed: false)
        case .storedCallbackFailed(let response):
            job.reporter.update(acknowledged: size, blocks: nil)
            return UploadJob.Completion(response: response, localEtag: etag, callbackFailed: true)
        case .stale(let response):
            throw UploadError(.server(status: response.status), "form upload answered a stale-context status")
        }
    }

    /// The multipart body (CRLF line ends, `name` and `filename` quoted with `"` and CR/LF escaped).
    static func body(fields: [(String, String)], fname: String, mimeType: String, content: [UInt8], boundary: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(content.count + 1024)
        func append(_ text: String) { out.append(contentsOf: Array(text.utf8)) }
        for (name, value) in fields {
            append("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(quoted(name))\"\r\n\r\n\(value)\r\n")
        }
        append("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(quoted(fname))\"\r\n")
        append("Content-Type: \(mimeType)\r\n\r\n")
        out.append(contentsOf: content)
        append(trailer(boundary))
        return out
    }

    /// What follows the file's bytes.
    static func trailer(_ boundary: String) -> String { "\r\n--\(boundary)--\r\n" }

    private static func quoted(_ text: String) -> String {
        text.replacing("\"", with: "%22").replacing("\r", with: "%0D").replacing("\n", with: "%0A")
    }
}
