/// The life of one durable message in an outbox — an upload callback of up-server, a webhook of
/// biz-server — as a pure state machine (DESIGN.md habit 4: events in, actions out, time passed
/// in, no I/O). The store keeps the state; the worker and the synchronous first attempt only
/// carry out the actions.
///
/// ```
///            claim (due, or lease expired)        succeeded
///  pending ──────────────────────────────▶ claimed ─────────▶ delivered
///     ▲  ▲                                  │  │
///     │  └──────── failed, attempts left ───┘  │ failed, none left
///     │              (retry at now + delay)    ▼
///     └───────────────── requeue ───────────  dead
/// ```
///
/// Several processes may share one outbox (DESIGN.md "Round 2": shared state never lives in a
/// process). What keeps them from delivering one message twice at once is the **claim**: an
/// owner takes a due message with a lease (`leaseUntil`), and only the owner that holds the
/// claim may record its outcome. A claim whose lease has run out (its owner died, or hangs) is
/// taken over by the next claimant; the old owner's late outcome is then refused
/// (``Refusal/notClaimant``). No time-based guess coordinates owners: a fresh message that its
/// creator tries at once is simply *born claimed* by that creator (``born(now:leaseSeconds:claimedBy:)``).
///
/// Attempts are counted when a claim is granted, not when an outcome is recorded, so a message
/// whose attempts crash their process still runs out of attempts and ends dead.
public struct OutboxDelivery: Sendable, Hashable {
    /// Where a message stands.
    public enum State: Sendable, Hashable {
        /// Waiting; due once `now >= dueAt` ("retry at" while `dueAt` lies ahead).
        case pending(dueAt: Int64)
        /// Being attempted by `owner`, which alone may record the outcome; others may take it over
        /// once `now >= leaseUntil`.
        case claimed(owner: String, leaseUntil: Int64)
        /// Acknowledged by the receiver. Final.
        case delivered
        /// Every attempt failed. Stays visible; only ``Event/requeue(now:)`` moves it again.
        case dead

        /// The state's name, as stored and listed.
        public var phase: Phase {
            switch self {
            case .pending: .pending
            case .claimed: .claimed
            case .delivered: .delivered
            case .dead: .dead
            }
        }
    }

    /// The name of a ``State``, without its data: what stores keep in their state column and
    /// what listings filter by.
    public enum Phase: String, Sendable, CaseIterable, Hashable {
        /// ``State/pending(dueAt:)``.
        case pending
        /// ``State/claimed(owner:leaseUntil:)``.
        case claimed
        /// ``State/delivered``.
        case delivered
        /// ``State/dead``.
        case dead
    }

    /// Something that happened to the message.
    public enum Event: Sendable, Hashable {
        /// `owner` asks to attempt it now, holding it for `leaseSeconds`.
        case claim(owner: String, now: Int64, leaseSeconds: Int64)
        /// `owner` asks to attempt it at once, ahead of its retry schedule, because someone is
        /// waiting for the outcome (up-server: the uploader repeated the request that stored the
        /// object). Granted like a claim but also before `dueAt`; refused while another claim's
        /// lease runs. It is an extra attempt, not one of the schedule's: ``attempts`` is
        /// unchanged, so however often an uploader repeats, the background retries are not used up.
        case expedite(owner: String, now: Int64, leaseSeconds: Int64)
        /// `owner`'s attempt was acknowledged.
        case succeeded(owner: String)
        /// `owner`'s attempt failed at `now`.
        case failed(owner: String, now: Int64)
        /// An operator asks for a dead message to be tried again from `now`, with a fresh schedule.
        case requeue(now: Int64)
    }

    /// What the caller must do.
    public enum Action: Sendable, Hashable {
        /// The claim is granted: send the message now. `takenOverFrom` names the owner whose
        /// lease had run out, if any (worth a log line: that owner died or hangs).
        case send(takenOverFrom: String?)
        /// Store ``OutboxDelivery/state`` (and ``OutboxDelivery/attempts``): the outcome of an
        /// attempt, or a requeue.
        case record
        /// Nothing to do; the state is unchanged.
        case refuse(Refusal)
    }

    /// Why an event changed nothing.
    public enum Refusal: Sendable, Hashable {
        /// A claim before `dueAt`.
        case notDue(dueAt: Int64)
        /// A claim while `owner` holds an unexpired lease.
        case claimedByOther(owner: String, leaseUntil: Int64)
        /// An outcome from an owner that does not hold the claim (its lease ran out and another
        /// took the message over, or it was never claimed by it).
        case notClaimant
        /// A claim of a delivered or dead message, or a requeue of one that is not dead.
        case notApplicable(Phase)
    }

    /// Where the message stands now.
    public private(set) var state: State
    /// Attempts begun so far (claims granted) since the message was created or requeued.
    public private(set) var attempts: Int

    /// A delivery in `state` after `attempts` attempts (as read back from a store).
    public init(state: State, attempts: Int) {
        self.state = state
        self.attempts = attempts
    }

    /// A new message at `now`: pending and due at once, or — when its creator attempts it right
    /// away — already claimed by `owner`, the first attempt begun.
    public static func born(now: Int64, leaseSeconds: Int64, claimedBy owner: String?) -> OutboxDelivery {
        guard let owner else { return OutboxDelivery(state: .pending(dueAt: now), attempts: 0) }
        return OutboxDelivery(state: .claimed(owner: owner, leaseUntil: now + leaseSeconds), attempts: 1)
    }

    /// Whether a claim at `now` would be granted: pending and due, or claimed with the lease run
    /// out. Stores select claimable messages with exactly this rule.
    public func isClaimable(now: Int64) -> Bool {
        switch state {
        case .pending(let dueAt): dueAt <= now
        case .claimed(_, let leaseUntil): leaseUntil <= now
        case .delivered, .dead: false
        }
    }

    /// Applies `event`; `schedule` decides what a failure leads to.
    public mutating func handle(_ event: Event, schedule: Schedule) -> Action {
        switch (event, state) {
        case (.claim(let owner, let now, let leaseSeconds), .pending(let dueAt)):
            guard dueAt <= now else { return .refuse(.notDue(dueAt: dueAt)) }
            return grant(to: owner, now: now, leaseSeconds: leaseSeconds, takingOverFrom: nil)
        case (.claim(let owner, let now, let leaseSeconds), .claimed(let holder, let leaseUntil)):
            guard leaseUntil <= now else { return .refuse(.claimedByOther(owner: holder, leaseUntil: leaseUntil)) }
            return grant(to: owner, now: now, leaseSeconds: leaseSeconds, takingOverFrom: holder)
        case (.claim, _):
            return .refuse(.notApplicable(state.phase))
        case (.expedite(let owner, let now, let leaseSeconds), .pending):
            state = .claimed(owner: owner, leaseUntil: now + leaseSeconds)
            return .send(takenOverFrom: nil)
        case (.expedite(let owner, let now, let leaseSeconds), .claimed(let holder, let leaseUntil)):
            guard leaseUntil <= now else { return .refuse(.claimedByOther(owner: holder, leaseUntil: leaseUntil)) }
            state = .claimed(owner: owner, leaseUntil: now + leaseSeconds)
            return .send(takenOverFrom: holder)
        case (.expedite, _):
            return .refuse(.notApplicable(state.phase))
        case (.succeeded(let owner), .claimed(let holder, _)):
            guard owner == holder else { return .refuse(.notClaimant) }
            state = .delivered
            return .record
        case (.failed(let owner, let now), .claimed(let holder, _)):
            guard owner == holder else { return .refuse(.notClaimant) }
            state = schedule.delay(afterAttempt: attempts).map { .pending(dueAt: now + $0) } ?? .dead
            return .record
        case (.succeeded, _), (.failed, _):
            return .refuse(.notClaimant)
        case (.requeue(let now), .dead):
            state = .pending(dueAt: now)
            attempts = 0
            return .record
        case (.requeue, _):
            return .refuse(.notApplicable(state.phase))
        }
    }

    private mutating func grant(to owner: String, now: Int64, leaseSeconds: Int64, takingOverFrom holder: String?)
        -> Action
    {
        state = .claimed(owner: owner, leaseUntil: now + leaseSeconds)
        attempts += 1
        return .send(takenOverFrom: holder)
    }
}
