import Synchronization
import UpCore

/// The key pairs and buckets up-server accepts right now, shared by everything that checks or
/// signs with them (upload tokens, management signatures, callback signatures, bucket checks)
/// and replaced as a whole by a configuration reload (SIGHUP). Read per use, so a request
/// that starts after the reload sees the new set.
final class UpCredentials: Sendable {
    private let state: Mutex<(keys: KeyRing, secrets: [String: String], buckets: Set<String>)>

    /// The pairs (AccessKey → SecretKey) and buckets of a configuration.
    init(keys: [String: String], buckets: [String]) {
        state = Mutex((KeyRing(keys), keys, Set(buckets)))
    }

    /// AccessKey → prepared HMAC of its SecretKey.
    var keys: KeyRing { state.withLock { $0.keys } }

    /// The buckets that exist; any other is `631 no such bucket`.
    var buckets: Set<String> { state.withLock { $0.buckets } }

    /// Replaces the whole set; returns the old pairs and buckets (for the reload's log line).
    @discardableResult
    func replace(keys: [String: String], buckets: [String]) -> (secrets: [String: String], buckets: Set<String>) {
        state.withLock { state in
            let old = (state.secrets, state.buckets)
            state = (KeyRing(keys), keys, Set(buckets))
            return old
        }
    }
}
