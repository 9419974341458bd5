import NativePostgres
import Testing

@Suite struct PostgresConnectionTests {
    @Test func typesRoundTripThroughParametersAndResults() async throws {
        let database = try await testDatabase()
        let pool = PostgresPool(database)
        let bytes: [UInt8] = Array(0...255) + [0, 0, 255]
        let row = try await pool.withConnection { connection in
            try connection.execute(
                "CREATE TABLE t (id bigint, small int4, name text, data bytea, flag bool, ratio float8, note text)")
            try connection.query(
                "INSERT INTO t VALUES ($1, $2, $3, $4, $5, $6, $7)",
                [.integer(Int64.min), 7, "snow ☃ \u{1F600}", .bytes(bytes), true, 0.1, nil])
            return try #require(connection.query("SELECT * FROM t").first)
        }
        #expect(try row.decode(0, as: Int64.self) == Int64.min)
        #expect(try row.decode("small", as: Int.self) == 7)
        #expect(try row.decode(2, as: String.self) == "snow ☃ \u{1F600}")
        #expect(try row.decode(3, as: [UInt8].self) == bytes)
        #expect(try row.decode(4, as: Bool.self) == true)
        #expect(try row.decode(5, as: Double.self) == 0.1)
        #expect(row.isNull(6))
        #expect(try row.decode(6, as: String?.self) == nil)
        #expect(try row.decode(2, as: String?.self) == "snow ☃ \u{1F600}")
    }

    @Test func theServerSeesTheBytesAndValuesThatWereSent() async throws {
        // The oracle is the server's own functions, not our decoder.
        let pool = PostgresPool(try await testDatabase())
        let row = try await pool.withConnection { connection in
            try #require(
                connection.query(
                    "SELECT encode($1::bytea, 'hex'), octet_length($1::bytea), $2::int8 + 1, $3::bool, length($4::text), $5::float8 * 2",
                    [.bytes([0, 1, 0xfe, 0xff]), 41, false, "ä€𝄞", 1.5]
                ).first)
        }
        #expect(try row.decode(0, as: String.self) == "0001feff")
        #expect(try row.decode(1, as: Int.self) == 4)
        #expect(try row.decode(2, as: Int64.self) == 42)
        #expect(try row.decode(3, as: Bool.self) == false)
        #expect(try row.decode(4, as: Int.self) == 3)
        #expect(try row.decode(5, as: Double.self) == 3.0)
    }

    @Test func emptyBytesAndEmptyTextAreNotNull() async throws {
        let pool = PostgresPool(try await testDatabase())
        let row = try await pool.withConnection { connection in
            try #require(connection.query("SELECT $1::bytea IS NULL, $2::text IS NULL, $1::bytea, $2::text", [.bytes([]), ""]).first)
        }
        #expect(try row.decode(0, as: Bool.self) == false)
        #expect(try row.decode(1, as: Bool.self) == false)
        #expect(try row.decode(2, as: [UInt8].self) == [])
        #expect(try row.decode(3, as: String.self) == "")
    }

    @Test func readingAColumnAsTheWrongTypeThrows() async throws {
        let pool = PostgresPool(try await testDatabase())
        let row = try await pool.withConnection { connection in
            try #require(connection.query("SELECT 'x'::bytea, '12'::text, NULL::int8, 1::int8").first)
        }
        #expect(throws: PostgresError(.typeMismatch)) { try row.decode(0, as: String.self) }
        #expect(throws: PostgresError(.typeMismatch)) { try row.decode(1, as: Int64.self) }
        #expect(throws: PostgresError(.typeMismatch)) { try row.decode(2, as: Int64.self) }
        #expect(throws: PostgresError(.typeMismatch)) { try row.decode(3, as: Bool.self) }
        #expect(throws: PostgresError(.typeMismatch)) { try row.decode(4, as: Int64.self) }
        #expect(throws: PostgresError(.typeMismatch)) { try row.decode("missing", as: Int64.self) }
        #expect(try row.decode(2, as: Int64?.self) == nil)
    }

    @Test func commandsReportTheRowsTheyAffected() async throws {
        let pool = PostgresPool(try await testDatabase())
        let counts = try await pool.withConnection { connection in
            try connection.execute("CREATE TABLE t (id int PRIMARY KEY, n int)")
            let insert = try connection.query("INSERT INTO t SELECT g, 0 FROM generate_series(1, 5) g")
            let update = try connection.query("UPDATE t SET n = n + 1 WHERE id > $1", [2])
            let conflict = try connection.query("INSERT INTO t VALUES ($1, 0) ON CONFLICT DO NOTHING", [1])
            let delete = try connection.query("DELETE FROM t WHERE id = $1", [99])
            return [insert.rowsAffected, update.rowsAffected, conflict.rowsAffected, delete.rowsAffected]
        }
        #expect(counts == [5, 3, 0, 0])
    }

    @Test func eachStatementIsPreparedOncePerConnection() async throws {
        let pool = PostgresPool(try await testDatabase(), configuration: .init(maxConnections: 1))
        let (ours, servers) = try await pool.withConnection { connection in
            for id in 0..<5 { try connection.query("SELECT $1::int + 1", [.integer(Int64(id))]) }
            try connection.query("SELECT $1::text", ["other"])
            let servers = try connection.query(
                "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE 'SELECT $1::%'")
            return (connection.preparedStatementCount, try #require(servers.first).decode(0, as: Int.self))
        }
        // The two statements above; the count query itself makes the third.
        #expect(ours == 3)
        #expect(servers == 2)
    }

    @Test func textWithANulCharacterIsRefusedNotTruncated() async throws {
        let pool = PostgresPool(try await testDatabase())
        await #expect(throws: PostgresError(.typeMismatch)) {
            try await pool.withConnection { try $0.query("SELECT $1::text", ["a\u{0}b"]) }
        }
    }

    @Test func noticesDoNotReachStandardError() async throws {
        // CREATE TABLE IF NOT EXISTS on an existing table raises a NOTICE; libpq's default
        // processor would print it. What is checked here is only that it does not fail; the
        // processor is set in PostgresConnection.init.
        let pool = PostgresPool(try await testDatabase())
        try await pool.withConnection { connection in
            try connection.execute("CREATE TABLE IF NOT EXISTS t (id int)")
            try connection.execute("CREATE TABLE IF NOT EXISTS t (id int)")
        }
    }
}
