import HTTPKit

/// Builds `multipart/form-data` bodies by hand, byte for byte as the Python SDK sends them
/// (qiniu-protocol.md §6), so tests control part order and framing exactly.
struct MultipartBody {
    /// The boundary of the observed Python request.
    var boundary = "687e0264638e43982283c7dcee4b44b3"
    private var bytes: [UInt8] = []

    /// Adds a plain field.
    mutating func field(_ name: String, _ value: String) {
        append("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n")
        bytes += Array(value.utf8) + Array("\r\n".utf8)
    }

    /// Adds a file part (`name="file"` by default).
    mutating func file(
        _ content: [UInt8], filename: String? = "h.txt", contentType: String? = "application/octet-stream",
        name: String = "file"
    ) {
        var header = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\""
        if let filename { header += "; filename=\"\(filename)\"" }
        header += "\r\n"
        if let contentType { header += "Content-Type: \(contentType)\r\n" }
        append(header + "\r\n")
        bytes += content + Array("\r\n".utf8)
    }

    /// The finished body, with the close delimiter.
    var body: [UInt8] { bytes + Array("--\(boundary)--\r\n".utf8) }

    /// `Content-Type: multipart/form-data; boundary=…`.
    var headers: HTTPHeaders { ["Content-Type": "multipart/form-data; boundary=\(boundary)"] }

    private mutating func append(_ text: String) { bytes += Array(text.utf8) }
}
