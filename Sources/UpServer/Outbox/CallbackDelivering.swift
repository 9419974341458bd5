/// Sends one callback (spec §3): every `;`-separated URL in turn until one answers 200 JSON.
///
/// The HTTP implementation (`HTTPCallbackDeliverer`) signs with QBox or Qiniu and uses
/// HTTPTransport; tests use a scripted double.
protocol CallbackDelivering: Sendable {
    /// Tries `request` once across its URLs; never throws — every failure is an outcome.
    func deliver(_ request: CallbackRequest) async -> CallbackOutcome
}

/// What one delivery attempt came to.
enum CallbackOutcome: Sendable, Equatable {
    /// A URL answered 200 with this JSON body, relayed to the uploader (spec §3.4).
    case delivered(reply: [UInt8])
    /// Every URL failed; the reason goes into `579 {"error": ...}` and the outbox.
    case failed(reason: String)
}
