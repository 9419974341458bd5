import Basics
import NativeCrypto
import UpCore

/// The dependencies every up-server controller shares, built once by ``UpServer``.
struct UpServices: Sendable {
    let configuration: UpServerConfiguration
    let index: any UpIndex
    let store: any BlockStore
    let hashes: BlockHashCache
    let locks: BlobWriteLocks
    let authorizer: UploadAuthorizer
    /// Authenticates ctx values (DESIGN.md: self-verifying ctx).
    let contextMAC: HMACSHA1
    let committer: ObjectCommitter
    let clock: any WallClock
    let metrics: UpMetrics
    let logger: Logger
    /// The externally reachable base URL (`host` in mkblk/bput replies, spec §4.2), no trailing slash.
    let baseURL: @Sendable () -> String

    /// Now, in whole Unix seconds.
    var now: Int64 { clock.unixSeconds }
}
