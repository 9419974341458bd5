internal import Foundation

/// The threads that blocking work runs on: a FIFO queue of jobs served by threads that are
/// started the moment a job finds none idle, up to ``maximumThreads``, and that end after
/// ``idleTimeout`` seconds without work.
///
/// Why not GCD: corelibs-libdispatch on Linux runs about one worker per core and adds threads
/// slowly, when its monitor finds workers blocked (32 jobs that wait for each other got 16
/// threads in 5 s here). Blocking work is what this pool is for: on GCD, 64 small uploads at
/// once came in waves of about a second. Here a job waits only when ``maximumThreads`` jobs are
/// already running.
///
/// Jobs must not wait for other jobs of the same pool (a full pool would never run the one
/// they wait for); waiting on work that runs elsewhere (a libcurl thread, the cooperative pool)
/// is what the threads are for.
///
/// `@unchecked Sendable`: every stored `var` is read and written only with `condition` locked.
public final class BlockingThreadPool: @unchecked Sendable {
    /// The pool every ``BlockingExecutor`` runs on.
    public static let shared = BlockingThreadPool(name: "upgate-blocking")

    /// The most threads that run at once; further jobs wait in order.
    public let maximumThreads: Int
    /// Seconds an idle thread waits for a job before it ends.
    public let idleTimeout: Double

    private let name: String
    private let stackSize: Int
    private let condition = NSCondition()
    private var jobs = JobQueue()
    /// Threads started and not yet ended, including ``starting`` ones.
    private var threads = 0
    /// Threads started whose loop has not yet taken the lock; they will take a job.
    private var starting = 0
    /// Threads waiting in `condition.wait`.
    private var idle = 0

    /// Creates a pool; no thread starts before the first job.
    ///
    /// - Parameters:
    ///   - name: The threads' name (shown by `top -H`, debuggers and crash reports).
    ///   - maximumThreads: The bound on threads running at once (at least 1). 128 by default:
    ///     enough for every connection of a database pool and every S3 request in flight, while a
    ///     runaway caller still meets a limit.
    ///   - idleTimeout: Seconds before an idle thread ends.
    ///   - stackSize: Each thread's stack in bytes; blocking calls are shallow.
    public init(name: String, maximumThreads: Int = 128, idleTimeout: Double = 10, stackSize: Int = 1 << 20) {
        self.name = name
        self.maximumThreads = max(1, maximumThreads)
        self.idleTimeout = idleTimeout
        self.stackSize = stackSize
    }

    /// Queues `job`, starting a thread for it if none is idle and the bound allows.
    public func submit(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        let start = jobs.count > idle + starting && threads < maximumThreads
        if start {
            threads += 1
            starting += 1
        } else if idle > 0 {
            condition.signal()
        }
        condition.unlock()
        if start { startThread() }
    }

    /// Threads alive now (running, idle or starting): for tests and metrics.
    public var threadCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return threads
    }

    private func startThread() {
        let thread = Thread { [self] in serve() }
        thread.stackSize = stackSize
        thread.start()
    }

    /// A thread's life: take jobs in order; end after ``idleTimeout`` with none.
    private func serve() {
        // Named from inside: on Linux a new thread inherits its creator's name (a cooperative
        // pool thread's), and Foundation applies a name set before `start()` only on Darwin.
        Thread.current.name = name
        condition.lock()
        starting -= 1
        while true {
            if let job = jobs.popFirst() {
                condition.unlock()
                job()
                condition.lock()
                continue
            }
            idle += 1
            let woken = condition.wait(until: Date(timeIntervalSinceNow: idleTimeout))
            idle -= 1
            if !woken && jobs.isEmpty {
                threads -= 1
                condition.unlock()
                return
            }
        }
    }
}

/// A first-in first-out queue of jobs: appends at the end, takes from a moving head, and moves
/// the live part down once the taken part is the larger half, so both stay O(1) amortized.
struct JobQueue {
    private var slots: [(@Sendable () -> Void)?] = []
    private var head = 0

    var count: Int { slots.count - head }
    var isEmpty: Bool { head == slots.count }

    mutating func append(_ job: @escaping @Sendable () -> Void) { slots.append(job) }

    mutating func popFirst() -> (@Sendable () -> Void)? {
        guard head < slots.count else { return nil }
        let job = slots[head]
        slots[head] = nil
        head += 1
        if head == slots.count {
            slots.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 32 && head * 2 > slots.count {
            slots.removeFirst(head)
            head = 0
        }
        return job
    }
}
