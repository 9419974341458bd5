import Outbox
import Testing

/// `OutboxDelivery`, table-driven: every (state, event) pair and what it leads to.
@Suite("OutboxDelivery")
struct OutboxDeliveryTests {
    /// 3 attempts in all; 5 s, then 10 s.
    static let schedule = OutboxDelivery.Schedule(maxAttempts: 3, firstDelay: 5, maxDelay: 3600)

    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var state: OutboxDelivery.State
        var attempts: Int
        var event: OutboxDelivery.Event
        var action: OutboxDelivery.Action
        var after: OutboxDelivery.State
        var attemptsAfter: Int
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        // Claims.
        Row(name: "a due pending message is claimed; the attempt counts", state: .pending(dueAt: 100), attempts: 0,
            event: .claim(owner: "a", now: 100, leaseSeconds: 30), action: .send(takenOverFrom: nil),
            after: .claimed(owner: "a", leaseUntil: 130), attemptsAfter: 1),
        Row(name: "a message due in the past is claimed", state: .pending(dueAt: 50), attempts: 1,
            event: .claim(owner: "a", now: 100, leaseSeconds: 30), action: .send(takenOverFrom: nil),
            after: .claimed(owner: "a", leaseUntil: 130), attemptsAfter: 2),
        Row(name: "a message retried later is not due yet", state: .pending(dueAt: 101), attempts: 1,
            event: .claim(owner: "a", now: 100, leaseSeconds: 30), action: .refuse(.notDue(dueAt: 101)),
            after: .pending(dueAt: 101), attemptsAfter: 1),
        Row(name: "a live claim keeps others out", state: .claimed(owner: "a", leaseUntil: 130), attempts: 1,
            event: .claim(owner: "b", now: 129, leaseSeconds: 30),
            action: .refuse(.claimedByOther(owner: "a", leaseUntil: 130)),
            after: .claimed(owner: "a", leaseUntil: 130), attemptsAfter: 1),
        Row(name: "its own live claim is not granted twice", state: .claimed(owner: "a", leaseUntil: 130), attempts: 1,
            event: .claim(owner: "a", now: 100, leaseSeconds: 30),
            action: .refuse(.claimedByOther(owner: "a", leaseUntil: 130)),
            after: .claimed(owner: "a", leaseUntil: 130), attemptsAfter: 1),
        Row(name: "an expired claim is taken over", state: .claimed(owner: "a", leaseUntil: 130), attempts: 1,
            event: .claim(owner: "b", now: 130, leaseSeconds: 30), action: .send(takenOverFrom: "a"),
            after: .claimed(owner: "b", leaseUntil: 160), attemptsAfter: 2),
        Row(name: "a delivered message is never claimed", state: .delivered, attempts: 1,
            event: .claim(owner: "a", now: 100, leaseSeconds: 30), action: .refuse(.notApplicable(.delivered)),
            after: .delivered, attemptsAfter: 1),
        Row(name: "a dead message is never claimed", state: .dead, attempts: 3,
            event: .claim(owner: "a", now: 100, leaseSeconds: 30), action: .refuse(.notApplicable(.dead)),
            after: .dead, attemptsAfter: 3),
        // Expedited claims: someone waits for the outcome; the schedule's count is unchanged.
        Row(name: "an expedited claim takes a message not yet due; no attempt is counted",
            state: .pending(dueAt: 300), attempts: 2, event: .expedite(owner: "b", now: 100, leaseSeconds: 30),
            action: .send(takenOverFrom: nil), after: .claimed(owner: "b", leaseUntil: 130), attemptsAfter: 2),
        Row(name: "an expedited claim takes over an expired claim", state: .claimed(owner: "a", leaseUntil: 130),
            attempts: 1, event: .expedite(owner: "b", now: 131, leaseSeconds: 30), action: .send(takenOverFrom: "a"),
            after: .claimed(owner: "b", leaseUntil: 161), attemptsAfter: 1),
        Row(name: "an expedited claim waits for a live claim", state: .claimed(owner: "a", leaseUntil: 130),
            attempts: 1, event: .expedite(owner: "b", now: 120, leaseSeconds: 30),
            action: .refuse(.claimedByOther(owner: "a", leaseUntil: 130)),
            after: .claimed(owner: "a", leaseUntil: 130), attemptsAfter: 1),
        Row(name: "a delivered message is never expedited", state: .delivered, attempts: 1,
            event: .expedite(owner: "a", now: 100, leaseSeconds: 30), action: .refuse(.notApplicable(.delivered)),
            after: .delivered, attemptsAfter: 1),
        Row(name: "a dead message is never expedited", state: .dead, attempts: 3,
            event: .expedite(owner: "a", now: 100, leaseSeconds: 30), action: .refuse(.notApplicable(.dead)),
            after: .dead, attemptsAfter: 3),
        Row(name: "an expedited attempt's failure keeps the schedule's step", state: .claimed(owner: "b", leaseUntil: 130),
            attempts: 2, event: .failed(owner: "b", now: 110), action: .record, after: .pending(dueAt: 120),
            attemptsAfter: 2),
        // Outcomes.
        Row(name: "the claimant's success delivers", state: .claimed(owner: "a", leaseUntil: 130), attempts: 1,
            event: .succeeded(owner: "a"), action: .record, after: .delivered, attemptsAfter: 1),
        Row(name: "success is recorded even after the lease ran out, while nobody took over",
            state: .claimed(owner: "a", leaseUntil: 130), attempts: 1,
            event: .succeeded(owner: "a"), action: .record, after: .delivered, attemptsAfter: 1),
        Row(name: "a first failure retries after the first delay", state: .claimed(owner: "a", leaseUntil: 130),
            attempts: 1, event: .failed(owner: "a", now: 110), action: .record, after: .pending(dueAt: 115),
            attemptsAfter: 1),
        Row(name: "a second failure waits twice as long", state: .claimed(owner: "a", leaseUntil: 130), attempts: 2,
            event: .failed(owner: "a", now: 110), action: .record, after: .pending(dueAt: 120), attemptsAfter: 2),
        Row(name: "the last attempt's failure is dead", state: .claimed(owner: "a", leaseUntil: 130), attempts: 3,
            event: .failed(owner: "a", now: 110), action: .record, after: .dead, attemptsAfter: 3),
        Row(name: "an owner that lost its claim records nothing (success)",
            state: .claimed(owner: "b", leaseUntil: 160), attempts: 2, event: .succeeded(owner: "a"),
            action: .refuse(.notClaimant), after: .claimed(owner: "b", leaseUntil: 160), attemptsAfter: 2),
        Row(name: "an owner that lost its claim records nothing (failure)",
            state: .claimed(owner: "b", leaseUntil: 160), attempts: 2, event: .failed(owner: "a", now: 140),
            action: .refuse(.notClaimant), after: .claimed(owner: "b", leaseUntil: 160), attemptsAfter: 2),
        Row(name: "an outcome for an unclaimed message is refused", state: .pending(dueAt: 100), attempts: 1,
            event: .succeeded(owner: "a"), action: .refuse(.notClaimant), after: .pending(dueAt: 100), attemptsAfter: 1),
        Row(name: "an outcome after delivery changes nothing", state: .delivered, attempts: 1,
            event: .failed(owner: "a", now: 100), action: .refuse(.notClaimant), after: .delivered, attemptsAfter: 1),
        // Requeue.
        Row(name: "a dead message is requeued, due now, with a fresh schedule", state: .dead, attempts: 3,
            event: .requeue(now: 200), action: .record, after: .pending(dueAt: 200), attemptsAfter: 0),
        Row(name: "a pending message is not requeued", state: .pending(dueAt: 300), attempts: 1,
            event: .requeue(now: 200), action: .refuse(.notApplicable(.pending)), after: .pending(dueAt: 300),
            attemptsAfter: 1),
        Row(name: "a claimed message is not requeued", state: .claimed(owner: "a", leaseUntil: 230), attempts: 1,
            event: .requeue(now: 200), action: .refuse(.notApplicable(.claimed)),
            after: .claimed(owner: "a", leaseUntil: 230), attemptsAfter: 1),
        Row(name: "a delivered message is not requeued", state: .delivered, attempts: 1,
            event: .requeue(now: 200), action: .refuse(.notApplicable(.delivered)), after: .delivered, attemptsAfter: 1),
    ]

    @Test(arguments: rows)
    func transition(_ row: Row) {
        var delivery = OutboxDelivery(state: row.state, attempts: row.attempts)
        #expect(delivery.handle(row.event, schedule: Self.schedule) == row.action)
        #expect(delivery.state == row.after)
        #expect(delivery.attempts == row.attemptsAfter)
    }

    @Test(arguments: [
        (OutboxDelivery.State.pending(dueAt: 100), true), (.pending(dueAt: 101), false),
        (.claimed(owner: "a", leaseUntil: 100), true), (.claimed(owner: "a", leaseUntil: 101), false),
        (.delivered, false), (.dead, false),
    ])
    func claimableAt100(_ state: OutboxDelivery.State, _ claimable: Bool) {
        #expect(OutboxDelivery(state: state, attempts: 1).isClaimable(now: 100) == claimable)
    }

    @Test func aMessageIsBornPendingOrClaimedByItsCreator() {
        #expect(OutboxDelivery.born(now: 10, leaseSeconds: 30, claimedBy: nil) == .init(state: .pending(dueAt: 10), attempts: 0))
        #expect(
            OutboxDelivery.born(now: 10, leaseSeconds: 30, claimedBy: "a")
                == .init(state: .claimed(owner: "a", leaseUntil: 40), attempts: 1))
    }

    @Test(arguments: [(1, Int64?(5)), (2, 10), (3, nil), (4, nil)])
    func scheduleDoublesUntilTheLastAttempt(_ attempt: Int, _ delay: Int64?) {
        #expect(Self.schedule.delay(afterAttempt: attempt) == delay)
    }

    @Test func scheduleIsCapped() {
        let schedule = OutboxDelivery.Schedule(maxAttempts: 100, firstDelay: 5, maxDelay: 3600)
        #expect(schedule.delay(afterAttempt: 10) == 2560)
        #expect(schedule.delay(afterAttempt: 11) == 3600)
        #expect(schedule.delay(afterAttempt: 99) == 3600)
        #expect(OutboxDelivery.Schedule(maxAttempts: 0, firstDelay: 5, maxDelay: 10).delay(afterAttempt: 1) == nil)
    }
}
