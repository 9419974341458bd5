#if canImport(Glibc)
import Glibc
#endif

/// Process-wide signal dispositions. Here because `SIG_IGN` is a C function-pointer constant,
/// which safe modules may not touch.
public enum ProcessSignals {
    /// Ignores `signals` (e.g. `SIGINT`, `SIGTERM`) so that a dispatch signal source can observe
    /// them instead of the default handler killing the process.
    public static func ignore(_ signals: [Int32]) {
        for number in signals { _ = signal(number, SIG_IGN) }
    }

    /// Ignores `SIGPIPE`, so a client closing its socket mid-write cannot kill the process.
    public static func ignoreBrokenPipe() { ignore([SIGPIPE]) }
}
