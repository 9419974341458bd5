/// The v2 multipart paths `/buckets/<bucket>/objects/<B64 key | ~>/uploads[/<uploadId>[/<partNumber>]]`
/// (qiniu-protocol.md §5).
///
/// The method picks the step: `POST …/uploads` init, `PUT …/<id>/<n>` part, `POST …/<id>`
/// complete, `DELETE …/<id>` abort, `GET …/<id>` list parts. `~` (not in the B64 alphabet, so
/// unambiguous) means no key; an empty key segment is the empty key `""`. Bucket and upload id
/// are percent-decoded as for ``MkfilePath``; a `?query` (list-parts paging) is ignored here.
public struct MultipartPath: Sendable, Equatable {
    /// The largest part number (§5).
    public static let maxPartNumber = 10_000

    /// What the path names below `…/uploads`.
    public enum Resource: Sendable, Equatable {
        /// `…/uploads`: init.
        case uploads
        /// `…/uploads/<uploadId>`: complete, abort, list parts.
        case upload(id: String)
        /// `…/uploads/<uploadId>/<partNumber>`: upload part; `partNumber` 1…10000.
        case part(uploadID: String, partNumber: Int)
    }

    /// Bucket name (non-empty).
    public var bucket: String
    /// Object key; `nil` for `~`.
    public var key: String?
    /// The upload resource.
    public var resource: Resource

    /// Creates a path value.
    public init(bucket: String, key: String?, resource: Resource) {
        self.bucket = bucket
        self.key = key
        self.resource = resource
    }

    /// Parses a request path as received.
    ///
    /// - Parameter path: The raw path.
    /// - Returns: The parsed path.
    /// - Throws: ``UpError`` `.badRequest` (400): wrong shape, empty bucket or upload id, key
    ///   not B64 UTF-8, part number outside 1…10000; `.invalidKey` for a key ``ObjectKeyRule``
    ///   refuses.
    public static func parse(_ path: some StringProtocol) throws(UpError) -> MultipartPath {
        let segments = try WirePath.segments(path, after: "/buckets/")
        guard (4...6).contains(segments.count), segments[1] == "objects", segments[3] == "uploads" else {
            throw UpError(.badRequest, detail: "expected /buckets/<bucket>/objects/<key>/uploads[/<id>[/<n>]]")
        }
        guard !segments[0].isEmpty else { throw UpError(.badRequest, detail: "empty bucket") }
        let key = segments[2] == "~" ? nil : try WirePath.base64Key(segments[2])
        var resource = Resource.uploads
        if segments.count >= 5 {
            guard !segments[4].isEmpty else { throw UpError(.badRequest, detail: "empty uploadId") }
            resource = .upload(id: segments[4])
            if segments.count == 6 {
                let number = try WirePath.integer(segments[5], field: "partNumber", in: 1...Int64(maxPartNumber))
                resource = .part(uploadID: segments[4], partNumber: Int(number))
            }
        }
        return MultipartPath(bucket: segments[0], key: key, resource: resource)
    }

    /// The upload id, for ``Resource/upload(id:)`` and ``Resource/part(uploadID:partNumber:)``.
    public var uploadID: String? {
        switch resource {
        case .uploads: nil
        case .upload(let id), .part(let id, _): id
        }
    }

    /// The request path (key as padded B64, as the Python SDK sends it, §10.6).
    public var path: String {
        var out = "/buckets/" + WirePath.rawSegment(bucket) + "/objects/"
        out += (key.map(WirePath.base64Segment) ?? "~") + "/uploads"
        switch resource {
        case .uploads: break
        case .upload(let id): out += "/" + WirePath.rawSegment(id)
        case .part(let id, let number): out += "/" + WirePath.rawSegment(id) + "/\(number)"
        }
        return out
    }
}
