/// Delivers one outbox message: the only part of an outbox a service writes itself (up-server: the
/// signed upload callback; biz-server: the webhook).
public protocol OutboxSender: Sendable {
    /// Tries `entry` once. Never throws: every failure is an outcome, its reason free of secrets.
    func send(_ entry: OutboxEntry) async -> OutboxOutcome
}
