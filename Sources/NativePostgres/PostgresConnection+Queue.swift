internal import CLibPQ

/// All of a statement's parameter bytes in one buffer, with each one's offset (nil: NULL),
/// length and format, as `PQexecPrepared` and `PQsendQueryPrepared` take them.
typealias EncodedParameters = (buffer: [UInt8], offsets: [Int?], lengths: [Int32], formats: [Int32])

/// A statement waiting for the next round trip: a prepared one with its parameters, or SQL
/// without parameters (`BEGIN`, `COMMIT`) sent unnamed.
enum QueuedStatement {
    case prepared(name: String, parameters: EncodedParameters)
    case plain(String)
}

extension PostgresConnection {
    /// At most this many statements wait; the next one sends them. A pipeline this short never
    /// fills the socket buffers both ways, which is what could block a pipeline on a blocking
    /// connection.
    static let queueCapacity = 64

    /// Queues a statement whose answer nobody reads (an `INSERT`, an `UPDATE`, a lock), to go to
    /// the server with the next statement that needs one, or with `COMMIT`, in one round trip
    /// (libpq's pipeline mode). Outside a transaction it runs at once, as ``query(_:_:)`` would.
    ///
    /// The statement runs in order with everything else on the connection; only its failure is
    /// reported later: by the statement, `COMMIT` or ``execute(_:)`` that sent it, which then
    /// throws this statement's error (a failed transaction is rolled back as usual). So queue
    /// only what the transaction's code would not catch and recover from.
    ///
    /// - Throws: ``PostgresError`` when the statement cannot be prepared, or from statements
    ///   queued earlier if preparing made room by sending them.
    public func queue(_ sql: String, _ parameters: [PostgresValue] = []) throws {
        guard isInTransaction else {
            try query(sql, parameters)
            return
        }
        if queued.count >= Self.queueCapacity { _ = try sendQueued(then: nil) }
        let name = try statementName(sql, types: parameters.map(\.typeOID))
        queued.append(.prepared(name: name, parameters: try encode(parameters)))
    }

    /// Opens a transaction block with the next round trip instead of one of its own.
    func queueBegin(_ isolation: IsolationLevel) {
        queued.append(.plain("BEGIN ISOLATION LEVEL \(isolation.rawValue)"))
        beginQueued = true
    }

    /// Forgets what is queued (the transaction is being rolled back, so none of it may run);
    /// says whether a `BEGIN` had reached the server, i.e. whether there is anything to roll back.
    func discardQueued() -> Bool {
        let begun = !beginQueued
        queued.removeAll()
        beginQueued = false
        return begun
    }

    /// Sends the queued statements and then `last` in one pipeline, reads every result, and
    /// returns `last`'s (nil without one).
    ///
    /// - Throws: the first failed statement's ``PostgresError`` (the server skipped the rest up
    ///   to the pipeline's sync), or a connection error.
    func sendQueued(then last: QueuedStatement?) throws -> PostgresResult? {
        var statements = queued
        queued.removeAll()
        beginQueued = false
        if let last { statements.append(last) }
        guard !statements.isEmpty else { return nil }
        guard unsafe PQenterPipelineMode(handle) == 1 else { throw connectionError() }
        defer { leavePipeline() }
        for statement in statements {
            guard send(statement) else { throw connectionError() }
        }
        guard unsafe PQpipelineSync(handle) == 1 else { throw connectionError() }
        var failure: PostgresError?
        var answer: PostgresResult?
        for index in statements.indices {
            // Each statement's results, then a NULL that ends them.
            guard let result = unsafe PQgetResult(handle) else { throw connectionError() }
            switch unsafe PQresultStatus(result) {
            case PGRES_TUPLES_OK, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
                if index == statements.count - 1 { answer = unsafe Self.copy(result) }
            case PGRES_PIPELINE_ABORTED:
                break
            default:
                if failure == nil { failure = unsafe error(from: result) }
            }
            unsafe PQclear(result)
            while let extra = unsafe PQgetResult(handle) { unsafe PQclear(extra) }
        }
        guard let sync = unsafe PQgetResult(handle) else { throw connectionError() }
        let synced = unsafe PQresultStatus(sync) == PGRES_PIPELINE_SYNC
        unsafe PQclear(sync)
        if let failure { throw failure }
        guard synced else { throw PostgresError(.other, message: "pipeline ended without its sync result") }
        return answer
    }

    private func send(_ statement: QueuedStatement) -> Bool {
        switch statement {
        case .plain(let sql):
            return unsafe PQsendQueryParams(handle, sql, 0, nil, nil, nil, nil, 0) == 1
        case .prepared(let name, let encoded):
            return unsafe Self.withValues(encoded) { values in
                unsafe PQsendQueryPrepared(
                    handle, name, Int32(encoded.offsets.count), values, encoded.lengths, encoded.formats, 0) == 1
            }
        }
    }

    /// Calls `body` with each parameter's C string in `encoded.buffer` (nil for NULL), as
    /// `PQexecPrepared` and `PQsendQueryPrepared` take them; the pointers live only inside `body`.
    static func withValues<R>(_ encoded: EncodedParameters, _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
        unsafe encoded.buffer.withUnsafeBufferPointer { buffer in
            let base = unsafe UnsafeRawPointer(buffer.baseAddress!)
            let values = unsafe encoded.offsets.map { offset in
                unsafe offset.map { unsafe (base + $0).assumingMemoryBound(to: CChar.self) }
            }
            return unsafe body(values)
        }
    }

    /// Leaves pipeline mode; after a failure part-way, first reads what is left up to the sync,
    /// so the connection can run ordinary statements again (or shows as broken).
    private func leavePipeline() {
        guard unsafe PQpipelineStatus(handle) != PQ_PIPELINE_OFF else { return }
        if unsafe PQexitPipelineMode(handle) == 1 { return }
        var nulls = 0
        while nulls < 2, !isBroken {
            guard let result = unsafe PQgetResult(handle) else {
                nulls += 1
                continue
            }
            nulls = 0
            let status = unsafe PQresultStatus(result)
            unsafe PQclear(result)
            if status == PGRES_PIPELINE_SYNC { break }
        }
        _ = unsafe PQexitPipelineMode(handle)
    }
}
