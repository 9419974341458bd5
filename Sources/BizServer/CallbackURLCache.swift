import Basics
import Synchronization

/// biz-server's own `…/v1/callback` URL, which goes into every token: made once per bound port
/// rather than once per token (formatting it from the configuration cost ~6,000 instructions,
/// about a tenth of a token's own work).
final class CallbackURLCache: Sendable {
    private let port: BoundPort
    private let make: @Sendable () -> String
    private let made = Mutex<(port: Int?, url: String)?>(nil)

    /// - Parameters:
    ///   - port: The port the server binds (nil before it has).
    ///   - make: Builds the URL from the configuration and `port`.
    init(port: BoundPort, make: @escaping @Sendable () -> String) {
        self.port = port
        self.make = make
    }

    /// The URL for the port bound now; remade when that port is not the one it was made for.
    func current() -> String {
        let bound = port.value
        if let made = made.withLock({ $0 }), made.port == bound { return made.url }
        let url = make()
        made.withLock { $0 = (bound, url) }
        return url
    }
}
