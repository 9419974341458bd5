/// `maxBytesPerUserPerDay`: how many bytes one end user may still upload, from the sizes of
/// their uploads recorded in the last 24 hours. Pure: the sizes and the time come in.
struct DailyByteQuota: Sendable, Equatable {
    /// The window, in milliseconds.
    static let window: Int64 = 86_400_000

    /// Bytes allowed per window.
    let limit: Int64

    /// The outcome for one token request.
    enum Decision: Equatable {
        /// A token may be issued; it must allow at most `remaining` bytes.
        case allowed(remaining: Int64)
        /// Nothing (or not the declared size) is left; retry after this many seconds, when
        /// enough of the oldest counted uploads have left the window.
        case exhausted(retryAfter: Int)
        /// The declared size is larger than the whole daily allowance.
        case tooLarge
    }

    /// Decides at `now` (Unix ms) for a request declaring `declared` bytes (nil: at least one
    /// byte must be left), given the user's `recorded` uploads oldest first.
    func decide(recorded: [UploadSize], declared: Int64?, now: Int64) -> Decision {
        let need = declared ?? 1
        guard need <= limit else { return .tooLarge }
        let counted = recorded.filter { $0.receivedAt > now - Self.window }
        var used = counted.reduce(Int64(0)) { $0.addingReportingOverflow($1.fsize).partialValue }
        if used <= limit - need { return .allowed(remaining: limit - used) }
        for upload in counted {
            used -= upload.fsize
            if used <= limit - need {
                let milliseconds = upload.receivedAt + Self.window - now
                return .exhausted(retryAfter: max(1, Int((milliseconds + 999) / 1000)))
            }
        }
        // Unreachable: with every upload gone `used` is 0 ≤ limit - need.
        return .exhausted(retryAfter: Int(Self.window / 1000))
    }
}
