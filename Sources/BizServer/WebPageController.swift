import Foundation
import HTTPKit

/// Serves the browser side of Upgate from biz-server's own origin (issue 13 §1–2): the upload
/// page at `GET /` and the library it uses at `GET /upgate.js`.
///
/// Both are source files of this module (`Sources/BizServer/Web/`), copied into its resource
/// bundle by SwiftPM and read once, when the routes are first built. A missing bundle (a
/// binary moved away from its build directory) answers 404 rather than stopping the server.
struct WebPageController {
    /// The files, read once per process.
    private static let files: [String: [UInt8]] = {
        var files: [String: [UInt8]] = [:]
        for name in ["index.html", "upgate.js"] {
            guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Web"),
                let data = try? Data(contentsOf: url)
            else { continue }
            files[name] = Array(data)
        }
        return files
    }()

    func register(on router: inout Router) {
        router.getSync("/") { _, _ in try Self.serve("index.html", type: "text/html; charset=utf-8") }
        router.getSync("/upgate.js") { _, _ in try Self.serve("upgate.js", type: "text/javascript; charset=utf-8") }
    }

    private static func serve(_ name: String, type: String) throws -> Response {
        guard let body = files[name] else { throw HTTPError.notFound }
        // no-cache: a browser revalidates, so a new build's page and library arrive together.
        return Response(status: 200, headers: [
            "Content-Type": type, "Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff",
        ], body: body)
    }
}
