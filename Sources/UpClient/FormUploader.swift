import HTTPTransport
import UpCore

/// One multipart/form-data `POST /` (qiniu-protocol.md §6), fields in the SDK's order: token,
/// key, crc32, x:…, x-qn-meta-…, file last. The body is built in memory, which is why
/// ``UploadClient`` uses form upload only for small files.
struct FormUploader: Sendable {
    let job: UploadJob

    /// Sends the file; returns the reply.
    func run() async throws(UploadError) -> TransportResponse {
        let request = job.request
        let size = job.facts.size
        let content = try FileRegion.read(path: request.filePath, offset: 0, length: size)
        guard Int64(content.count) == size else { throw UploadError(.file, "\(request.filePath) changed while reading") }
        var crc = 0 as UInt32
        if size > 0 { crc = try FileRegion.crc32(path: request.filePath, offset: 0, length: size) }
        let boundary = (0..<32).map { _ in String(UInt8.random(in: 0...15), radix: 16) }.joined()
        let progressID = job.reporter.begin()
        let job = self.job
        let crcField = crc
        let outcome = try await job.sender.send { host, token in
            var fields: [(String, String)] = [("token", token)]
            if let key = request.key { fields.append(("key", key)) }
            // Python omits crc32 when it is 0 (an empty file) (§6).
            if crcField != 0 { fields.append(("crc32", String(crcField))) }
            fields += request.sortedVariables.map { ($0.name, $0.value) }
            fields += request.sortedMetadata.map { ($0.name, $0.value) }
            let body = Self.body(
                fields: fields, fname: request.resolvedFname, mimeType: request.mimeType ?? "application/octet-stream",
                content: content, boundary: boundary)
            return TransportRequest(
                method: "POST", url: host + "/", headers: [("Content-Type", "multipart/form-data; boundary=" + boundary)],
                body: .bytes(body), timeout: job.timeout,
                progress: { @Sendable bytes in job.reporter.sent(progressID, bytes: min(bytes, size)) })
        }
        job.reporter.end(progressID)
        guard case .success(let response) = outcome else {
            throw UploadError(.server(status: 701), "form upload answered a stale-context status")
        }
        job.reporter.update(acknowledged: size, blocks: nil)
        return response
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
        append("\r\n--\(boundary)--\r\n")
        return out
    }

    private static func quoted(_ text: String) -> String {
        text.replacing("\"", with: "%22").replacing("\r", with: "%0D").replacing("\n", with: "%0A")
    }
}
