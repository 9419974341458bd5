#if os(Linux)
internal import CLinuxExtras
#endif

/// The processor the calling thread runs on, from `sched_getcpu` (on glibc 2.35 and later a read
/// of the thread's restartable-sequences area, no system call): what per-CPU counters use to pick
/// the slot that no thread on another core writes.
public enum CurrentProcessor {
    /// The index of the CPU the calling thread runs on now, 0 where the system cannot say (and on
    /// platforms without `sched_getcpu`). The thread may move right after: use it only to choose
    /// among places that are all correct, never for ownership.
    public static var index: Int {
        #if os(Linux)
        let cpu = sched_getcpu()
        return cpu < 0 ? 0 : Int(cpu)
        #else
        return 0
        #endif
    }
}
