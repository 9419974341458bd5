import Testing
@testable import UpClient

/// ``UploadControl/cancel(removingCheckpoint:)`` is the iOS SDKs' `cancel:`: NO pauses, YES aborts
/// (what each then does to an upload is asserted end to end in AppClientEndToEndTests).
@Suite struct UploadControlTests {
    @Test func cancelWithoutRemovingIsAPauseThatTheNextCallClears() {
        let control = UploadControl()
        let cancelled = Locked(0)
        _ = control.register { cancelled.add() }
        control.cancel(removingCheckpoint: false)
        #expect(control.isPaused && !control.isAborted)
        #expect(cancelled.value == 1)
        control.begin()
        #expect(!control.isPaused)
    }

    @Test func cancelRemovingIsAnAbortThatStays() {
        let control = UploadControl()
        control.cancel(removingCheckpoint: true)
        #expect(control.isAborted)
        control.begin()
        #expect(control.isAborted)
        // A request registered after the abort is cancelled at once.
        let cancelled = Locked(0)
        _ = control.register { cancelled.add() }
        #expect(cancelled.value == 1)
    }
}

import Synchronization

private final class Locked: Sendable {
    private let count: Mutex<Int>
    init(_ value: Int) { count = Mutex(value) }
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
