import Basics
@testable import BizServer
import Synchronization
import Testing

/// The callback URL is made once per bound port, and made again when the port changes (the
/// configured port before the server binds, the bound one after).
@Suite("CallbackURLCache")
struct CallbackURLCacheTests {
    @Test func makesTheURLOncePerBoundPort() {
        let port = BoundPort()
        let made = Mutex(0)
        let cache = CallbackURLCache(port: port) {
            made.withLock { $0 += 1 }
            return "http://127.0.0.1:\(port.value ?? 8080)/v1/callback"
        }
        #expect(cache.current() == "http://127.0.0.1:8080/v1/callback")
        #expect(cache.current() == "http://127.0.0.1:8080/v1/callback")
        #expect(made.withLock { $0 } == 1)
        port.value = 40123
        #expect(cache.current() == "http://127.0.0.1:40123/v1/callback")
        #expect(cache.current() == "http://127.0.0.1:40123/v1/callback")
        #expect(made.withLock { $0 } == 2)
    }
}
