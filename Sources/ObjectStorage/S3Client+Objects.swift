import HTTPTransport
import NativeCrypto
import Foundation

extension S3Client {
    /// `PutObject`: stores `body` under `key` and returns the new ETag. A `.bytes` body is
    /// protected as ``S3Settings/payloadIntegrity`` says.
    ///
    /// - Parameter onlyIfAbsent: send `If-None-Match: *`, so an existing key fails with
    ///   ``S3Error/Kind/preconditionFailed`` instead of being overwritten (AWS since 2024,
    ///   SeaweedFS; measured in the notes).
    public func putObject(
        _ key: String, body: Body, contentType: String? = nil, onlyIfAbsent: Bool = false
    ) async throws(S3Error) -> String {
        var headers: [(name: String, value: String)] = []
        if let contentType { headers.append(("Content-Type", contentType)) }
        if onlyIfAbsent { headers.append(("If-None-Match", "*")) }
        let response = try await send("PUT", key: key, headers: headers, body: body, objectBody: true, timeout: settings.transferTimeout)
        try await drain(response)
        return response.head[header: "ETag"]?.unquotedETag ?? ""
    }

    /// `GetObject`, streamed: the whole object, or `range` of it (`Range: bytes=a-b`).
    ///
    /// - Parameter ifMatch: an ETag the object must still have (else ``S3Error/Kind/preconditionFailed``).
    public func getObject(_ key: String, range: Range<Int64>? = nil, ifMatch: String? = nil) async throws(S3Error) -> S3Download {
        var headers: [(name: String, value: String)] = []
        if let range {
            guard !range.isEmpty else { throw S3Error(.rejected, message: "an empty range cannot be asked for") }
            headers.append(("Range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)"))
        }
        if let ifMatch { headers.append(("If-Match", "\"\(ifMatch)\"")) }
        let response = try await send("GET", key: key, headers: headers, timeout: settings.transferTimeout)
        let length = Int64(response.head[header: "Content-Length"] ?? "") ?? 0
        var size = length, served = 0..<length
        // RFC 9110 §14.4: "Content-Range: bytes 10-19/1000".
        if let contentRange = response.head[header: "Content-Range"], contentRange.hasPrefix("bytes ") {
            let parts = contentRange.dropFirst(6).split(separator: "/")
            let bounds = parts.first?.split(separator: "-").compactMap { Int64($0) } ?? []
            if parts.count == 2, let total = Int64(parts[1]), bounds.count == 2 {
                size = total
                served = bounds[0]..<(bounds[1] + 1)
            }
        }
        let info = S3ObjectInfo(
            size: size, etag: response.head[header: "ETag"]?.unquotedETag ?? "", contentType: response.head[header: "Content-Type"])
        return S3Download(info: info, range: served, body: response.body)
    }

    /// `HeadObject`: the object's size and ETag; ``S3Error/Kind/notFound`` when absent.
    public func headObject(_ key: String) async throws(S3Error) -> S3ObjectInfo {
        let response = try await send("HEAD", key: key)
        return S3ObjectInfo(
            size: Int64(response.head[header: "Content-Length"] ?? "") ?? 0,
            etag: response.head[header: "ETag"]?.unquotedETag ?? "", contentType: response.head[header: "Content-Type"])
    }

    /// `x-amz-checksum-crc32`: the CRC-32 (the zlib/gzip one) of `bytes`, big-endian, in base64.
    static func checksumCRC32(_ bytes: [UInt8]) -> String {
        let crc = CRC32.checksum(bytes)
        return Data([UInt8(crc >> 24), UInt8(truncatingIfNeeded: crc >> 16), UInt8(truncatingIfNeeded: crc >> 8), UInt8(truncatingIfNeeded: crc)])
            .base64EncodedString()
    }

    /// `DeleteObject`. Deleting a missing key succeeds (S3 answers 204 either way), so sweeps may repeat.
    public func deleteObject(_ key: String) async throws(S3Error) {
        try await drain(try await send("DELETE", key: key))
    }

    /// `DeleteObjects` in quiet mode, in batches of 1000 (S3's limit per request). Returns the keys
    /// the store could not delete, with its error code; missing keys count as deleted.
    public func deleteObjects(_ keys: [String]) async throws(S3Error) -> [(key: String, code: String)] {
        var failed: [(key: String, code: String)] = []
        var start = 0
        while start < keys.count {
            let batch = keys[start..<min(keys.count, start + 1000)]
            start += batch.count
            let objects = batch.map { "<Object><Key>\(S3XMLWriter.escape($0))</Key></Object>" }.joined()
            let xml = Array("<Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Quiet>true</Quiet>\(objects)</Delete>".utf8)
            // AWS requires a body checksum on DeleteObjects: Content-MD5 is the one every store takes.
            let md5 = Data(MD5.hash(xml)).base64EncodedString()
            let (root, _) = try await document(
                "POST", key: nil, query: [("delete", "")], headers: [("Content-MD5", md5), ("Content-Type", "application/xml")],
                body: .bytes(xml))
            for error in root.children("Error") {
                failed.append((error.text(of: "Key") ?? "", error.text(of: "Code") ?? ""))
            }
        }
        return failed
    }

    /// `ListObjectsV2`: one page of keys under `prefix`, at most `maxKeys` (S3 caps it at 1000).
    public func listObjects(prefix: String = "", continuationToken: String? = nil, maxKeys: Int = 1000) async throws(S3Error) -> S3ObjectListing {
        var query: [(name: String, value: String)] = [("list-type", "2"), ("max-keys", String(maxKeys)), ("prefix", prefix)]
        if let continuationToken { query.append(("continuation-token", continuationToken)) }
        let (root, _) = try await document("GET", key: nil, query: query)
        let objects = root.children("Contents").map { item in
            S3ListedObject(
                key: item.text(of: "Key") ?? "", size: Int64(item.text(of: "Size") ?? "") ?? 0,
                etag: (item.text(of: "ETag") ?? "").unquotedETag,
                lastModified: item.text(of: "LastModified").flatMap(S3Timestamp.unixSeconds))
        }
        let truncated = root.text(of: "IsTruncated") == "true"
        return S3ObjectListing(objects: objects, continuationToken: truncated ? root.text(of: "NextContinuationToken") : nil)
    }
}

/// Escaping for the few XML documents we send.
enum S3XMLWriter {
    /// `text` with `& < > " '` escaped.
    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(character)
            }
        }
        return out
    }
}
