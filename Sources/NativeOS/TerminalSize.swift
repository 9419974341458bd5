#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The size of the terminal behind a file descriptor, from the `TIOCGWINSZ` ioctl: the one call
/// that needs a pointer to a C struct, so it lives here and not in up-cli (which draws a progress
/// line that must fit, and must not wrap, at whatever width the terminal has right now).
public enum TerminalSize {
    /// The number of columns of the terminal on `descriptor`; nil when it is not a terminal or
    /// the terminal reports no size (0 columns, as a serial line may).
    public static func columns(of descriptor: Int32) -> Int? {
        var size = winsize()
        guard unsafe ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }
}
