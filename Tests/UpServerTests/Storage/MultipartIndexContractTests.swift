import Outbox
import Testing
@testable import UpServer

func part(_ upload: String, _ number: Int, _ blob: BlobID = .random(), etag: String? = nil) -> UploadPart {
    UploadPart(
        uploadID: upload, partNumber: number, blob: blob, size: 10, md5: "md5-\(number)",
        etag: etag ?? "etag-\(number)", digest: [UInt8](repeating: UInt8(number % 256), count: 20), putTime: 150)
}

/// The `MultipartIndex` contract, for every implementation.
@Suite("MultipartIndex contract")
struct MultipartIndexContractTests {
    @Test(arguments: IndexKind.allCases)
    func reuploadingAPartReplacesItAndListingPagesByMarker(kind: IndexKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let index = try await kind.make(directory)
        let upload = try await index.createUpload(bucket: "photos", key: nil, expiresAt: 1000, createdAt: 100)
        #expect(upload.id.count == 32 && upload.state == .active && upload.key == nil)
        #expect(try await index.upload(id: upload.id) == upload)
        for number in [5, 1, 3, 10000] { #expect(try await index.putPart(part(upload.id, number), now: 200) == nil) }
        let old = try #require(try await index.listParts(uploadID: upload.id, marker: 2, max: 1).parts.first)
        let replacement = part(upload.id, 3, etag: "etag-3b")
        #expect(try await index.putPart(replacement, now: 200) == old.blob)

        let first = try await index.listParts(uploadID: upload.id, marker: 0, max: 2)
        #expect(first.parts.map(\.partNumber) == [1, 3] && first.nextMarker == 3)
        #expect(first.parts[1] == replacement)
        let second = try await index.listParts(uploadID: upload.id, marker: first.nextMarker, max: 2)
        #expect(second.parts.map(\.partNumber) == [5, 10000] && second.nextMarker == 0)
        #expect(try await index.listParts(uploadID: upload.id, marker: 10000, max: 5) == PartListing(parts: [], nextMarker: 0))

        await #expect(throws: UpIndexError.self) { try await index.putPart(part(upload.id, 10001), now: 200) }
        await #expect(throws: UpIndexError.self) { try await index.putPart(part(upload.id, 0), now: 200) }
        await #expect(throws: UpIndexError.noSuchUpload) { try await index.putPart(part("nope", 1), now: 200) }
        // Honoured until its advertised expiry, not after (qiniu-protocol.md §9.6).
        await #expect(throws: UpIndexError.noSuchUpload) { try await index.putPart(part(upload.id, 2), now: 1000) }
    }

    /// What a part's first bytes were sniffed as comes back with it, whether a type, nothing
    /// recognised or not recorded, and a re-upload of the part replaces it too.
    @Test(arguments: IndexKind.allCases)
    func aPartKeepsWhatItsFirstBytesWereSniffedAs(kind: IndexKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let index = try await kind.make(directory)
        let upload = try await index.createUpload(bucket: "photos", key: nil, expiresAt: 1000, createdAt: 100)
        let kinds: [String??] = [.some("image/png"), .some(nil), nil]
        for (number, sniffed) in zip(1..., kinds) {
            var stored = part(upload.id, number)
            stored.sniffedType = sniffed
            _ = try await index.putPart(stored, now: 200)
        }
        let listed = try await index.listParts(uploadID: upload.id, marker: 0, max: 10).parts
        #expect(listed.map(\.sniffedType) == kinds)
        var again = part(upload.id, 1)
        again.sniffedType = .some("text/plain")
        _ = try await index.putPart(again, now: 200)
        #expect(try await index.listParts(uploadID: upload.id, marker: 0, max: 1).parts.first?.sniffedType == .some("text/plain"))
    }

    @Test(arguments: IndexKind.allCases)
    func completeStoresTheObjectAndInvalidatesTheUpload(kind: IndexKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let index = try await kind.make(directory)
        let upload = try await index.createUpload(bucket: "photos", key: "big.bin", expiresAt: 1000, createdAt: 100)
        let parts = [part(upload.id, 1), part(upload.id, 2), part(upload.id, 4)]
        for item in parts { _ = try await index.putPart(item, now: 200) }
        let chosen = [parts[0], parts[2]]  // part 2 left out: its blob is released
        let target = object("big.bin", chosen.map(\.blob))
        let references = chosen.map { PartReference(partNumber: $0.partNumber, etag: $0.etag) }

        await #expect(throws: UpIndexError.partMismatch(partNumber: 4)) {
            try await index.completeUpload(
                upload.id, parts: [references[0], PartReference(partNumber: 4, etag: "wrong")], object: target,
                mode: .replace, completion: nil, callback: nil, now: 300)
        }
        await #expect(throws: UpIndexError.partMismatch(partNumber: 1)) {
            try await index.completeUpload(
                upload.id, parts: references.reversed(), object: target, mode: .replace, completion: nil, callback: nil, now: 300)
        }
        guard case .stored(let stored, let released, let entry?) = try await index.completeUpload(
            upload.id, parts: references, object: target, mode: .replace, completion: nil, callback: callback(), now: 300)
        else { Issue.record("not stored"); return }
        #expect(stored.segments == chosen.map(\.segment) && stored.version == 1)
        #expect(released == [parts[1].blob])
        #expect(try await index.callbackOutbox.entry(id: entry.id) == entry)
        #expect(try await index.upload(id: upload.id)?.state == .completed)
        #expect(try await index.listParts(uploadID: upload.id, marker: 0, max: 10).parts.isEmpty)
        // After complete the uploadId is invalid (§5).
        await #expect(throws: UpIndexError.noSuchUpload) {
            try await index.completeUpload(
                upload.id, parts: references, object: target, mode: .replace, completion: nil, callback: nil, now: 300)
        }
        await #expect(throws: UpIndexError.noSuchUpload) { try await index.putPart(part(upload.id, 5), now: 300) }
        await #expect(throws: UpIndexError.noSuchUpload) { try await index.abortUpload(upload.id) }
    }

    @Test(arguments: IndexKind.allCases)
    func completeWithCompletionRecordAnswersItsRepeat(kind: IndexKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let index = try await kind.make(directory)
        let upload = try await index.createUpload(bucket: "photos", key: "big.bin", expiresAt: 1000, createdAt: 100)
        let item = part(upload.id, 1)
        _ = try await index.putPart(item, now: 200)
        let references = [PartReference(partNumber: 1, etag: item.etag)]
        let completion = NewCompletion(
            key: CompletionKey.multipartComplete(
                bucket: "photos", uploadID: upload.id, key: "big.bin", parts: [(1, item.etag)]),
            expiresAt: 1000)
        let target = object("big.bin", [item.blob])
        guard case .stored = try await index.completeUpload(
            upload.id, parts: references, object: target, mode: .replace, completion: completion, callback: nil,
            now: 300)
        else { Issue.record("not stored"); return }
        #expect(try await index.recordCompletionResult(completion.key, result: #"{"first":1}"#) == #"{"first":1}"#)
        // The repeat writes nothing and gets the record, where a bare repeat gets noSuchUpload.
        let repeated = try await index.completeUpload(
            upload.id, parts: references, object: target, mode: .replace, completion: completion, callback: nil,
            now: 400)
        guard case .alreadyCompleted(let recorded) = repeated else { Issue.record("\(repeated)"); return }
        #expect(recorded.objectKey == "big.bin" && recorded.etag == target.etag && recorded.result == #"{"first":1}"#)
        #expect(try await index.object(bucket: "photos", key: "big.bin")?.version == 1)
        // Another parts list is another request: no record.
        let other = CompletionKey.multipartComplete(
            bucket: "photos", uploadID: upload.id, key: "big.bin", parts: [(2, item.etag)])
        #expect(try await index.completion(other) == nil)
    }

    @Test(arguments: IndexKind.allCases)
    func abortReturnsEveryPartBlob(kind: IndexKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let index = try await kind.make(directory)
        let upload = try await index.createUpload(bucket: "photos", key: "x", expiresAt: 1000, createdAt: 100)
        let parts = [part(upload.id, 1), part(upload.id, 2)]
        for item in parts { _ = try await index.putPart(item, now: 200) }
        #expect(Set(try await index.abortUpload(upload.id)) == Set(parts.map(\.blob)))
        #expect(try await index.upload(id: upload.id)?.state == .aborted)
        await #expect(throws: UpIndexError.noSuchUpload) { try await index.abortUpload(upload.id) }
        await #expect(throws: UpIndexError.noSuchUpload) {
            try await index.completeUpload(
                upload.id, parts: [], object: object("x", []), mode: .replace, completion: nil, callback: nil, now: 300)
        }
    }

    @Test(arguments: IndexKind.allCases)
    func retiringAnUploadRecordsItsCompletionAndReturnsItsParts(kind: IndexKind) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let index = try await kind.make(directory)
        let upload = try await index.createUpload(bucket: "photos", key: "x", expiresAt: 1000, createdAt: 100)
        let parts = [part(upload.id, 1), part(upload.id, 2)]
        for item in parts { _ = try await index.putPart(item, now: 200) }
        let record = Completion(
            key: CompletionKey.multipartComplete(
                bucket: "photos", uploadID: upload.id, key: "x", parts: parts.map { ($0.partNumber, $0.etag) }),
            objectKey: "x", etag: "Fsame", result: #"{"key":"x"}"#, expiresAt: 1000)
        #expect(Set(try await index.retireUpload(upload.id, recording: record)) == Set(parts.map(\.blob)))
        #expect(try await index.upload(id: upload.id)?.state == .completed)
        #expect(try await index.completion(record.key) == record)
        #expect(try await index.listParts(uploadID: upload.id, marker: 0, max: 10).parts.isEmpty)
        // Only an active upload can be retired (or aborted).
        await #expect(throws: UpIndexError.noSuchUpload) { try await index.retireUpload(upload.id, recording: record) }
        await #expect(throws: UpIndexError.noSuchUpload) { try await index.abortUpload(upload.id) }
    }
}
