// UpToken parsing and authentication, PutPolicy JSON decoding, JSONValue.
//
// Input: one mode byte, then text.
//   even: the text is a token as received (and inside an `Authorization: UpToken …` header).
//   odd:  the text is policy JSON; the harness signs it with the dev key, so verification gets
//         past the HMAC and every policy decoding path is reachable.
@testable import UpCore

enum PolicyTarget {
    static func run(_ data: [UInt8]) {
        var input = FuzzInput(data)
        let mode = input.byte()
        let text = input.rest()
        if mode % 2 == 0 {
            checkToken(String(decoding: text, as: UTF8.self))
        } else {
            checkJSONRoundTrip(text)
            checkPolicy(String(decoding: text, as: UTF8.self), probe: mode)
        }
    }

    static func checkToken(_ token: String) {
        _ = attempt { () throws(UpError) in try UpToken.verify(token, keys: keys, now: now) }
        // The token is exactly the bytes after "UpToken " (§1.1: literal scheme, one space).
        switch attempt({ () throws(UpError) in try UpToken.token(fromAuthorization: "UpToken " + token) }) {
        case .success(let extracted):
            require(
                extracted.utf8.elementsEqual(token.utf8),
                "token(fromAuthorization:) returned \(show(extracted)) for the token \(show(token))")
        case .failure(let error):
            require(false, "token(fromAuthorization:) refused an UpToken header: \(show(error))")
        }
        if case .success(let extracted) = attempt({ () throws(UpError) in try UpToken.token(fromAuthorization: token) }) {
            require(
                token.utf8.starts(with: "UpToken ".utf8) && extracted.utf8.elementsEqual(token.utf8.dropFirst(8)),
                "token(fromAuthorization:) returned \(show(extracted)) for the header \(show(token))")
        }
    }

    static func checkPolicy(_ json: String, probe: UInt8) {
        let decoded = attempt { () throws(UpError) in try PutPolicy(jsonBytes: Array(json.utf8)) }
        let token = UpToken.sign(policyJSON: json, accessKey: devAccessKey, mac: devMac)
        let verified = attempt { () throws(UpError) in try UpToken.verify(token, keys: keys, now: now) }
        switch (decoded, verified) {
        case (.success(let policy), .success(let upToken)):
            require(policy.deadline >= now, "a token with deadline \(policy.deadline) < now verified")
            require(upToken.policy == policy, "verify decoded another policy than PutPolicy(jsonBytes:)")
            require(upToken.accessKey == devAccessKey, "verify returned access key \(show(upToken.accessKey))")
            require(upToken.encodedPolicy == token.split(separator: ":").last.map(String.init), "encodedPolicy changed")
        case (.success(let policy), .failure(let error)):
            require(
                policy.deadline < now && error.code == .expiredToken,
                "a validly signed policy was refused: \(show(error)) for \(show(json))")
        case (.failure, .success):
            require(false, "verify accepted a policy PutPolicy(jsonBytes:) refuses: \(show(json))")
        case (.failure(let parseError), .failure(let error)):
            require(
                parseError.code == .invalidJSON && error.code == .badToken,
                "unexpected errors \(show(parseError)) / \(show(error))")
        }
        guard case .success(let policy) = decoded else { return }

        // Serialize → decode is the identity; a signed policy verifies at its own deadline.
        let serialized = policy.serialized()
        switch attempt({ () throws(UpError) in try PutPolicy(jsonBytes: Array(serialized.utf8)) }) {
        case .success(let again):
            require(again == policy, "policy round trip changed it: \(show(json)) -> \(show(serialized))")
            require(again.serialized() == serialized, "policy serialization not stable: \(show(serialized))")
        case .failure(let error):
            require(false, "serialized policy does not decode (\(show(error))): \(show(serialized))")
        }
        let signed = UpToken.sign(policy, accessKey: devAccessKey, mac: devMac)
        switch attempt({ () throws(UpError) in try UpToken.verify(signed, keys: keys, now: policy.deadline) }) {
        case .success(let upToken): require(upToken.policy == policy, "signed policy verified as another one")
        case .failure(let error): require(false, "signed policy refused at its deadline: \(show(error))")
        }

        // The scope, limit and key-selection helpers: no trap, and the scope splits losslessly.
        require(
            policy.bucket + (policy.scopeKey.map { ":" + $0 } ?? "") == policy.scope,
            "bucket/scopeKey do not rebuild the scope \(show(policy.scope))")
        _ = policy.allowsOverwrite
        let candidate = policy.scopeKey ?? policy.endUser ?? ""
        _ = attempt { () throws(UpError) in try policy.authorize(key: candidate) }
        if !policy.isPrefixal, let scopeKey = policy.scopeKey, policy.keylimit == nil {
            require(
                (try? policy.authorize(key: scopeKey)) != nil, "the scope key \(show(scopeKey)) is not authorized")
        }
        _ = attempt { () throws(UpError) in try policy.checkMimeType(policy.endUser ?? policy.scope) }
        _ = attempt { () throws(UpError) in try policy.checkSize(policy.fsizeLimit ?? policy.deadline, isFinal: probe & 2 != 0) }
        _ = attempt { () throws(UpError) in
            try policy.finalKey(clientKey: probe & 4 != 0 ? candidate : nil, renderedSaveKey: policy.saveKey, etag: "e")
        }
    }

    static func seeds(_ vectors: Vectors) -> [[UInt8]] {
        var seeds: [[UInt8]] = []
        for group in vectors.groups(prefix: "uptoken_") {
            if let token = group["token"]?.stringValue { seeds.append(input { $0.byte(0); $0.rest(token) }) }
            if let json = group["policy_json"]?.stringValue { seeds.append(input { $0.byte(1); $0.rest(json) }) }
        }
        seeds.append(input { $0.byte(1); $0.rest(#"{"scope":"demo:a","deadline":1900000000,"forceSaveKey":1,"saveKey":"$(etag)","keylimit":["a","b"],"fsizeMin":1.0,"isPrefixalScope":true,"x":[null,{"y":-1.5e3}]}"#) })
        seeds.append(input { $0.byte(2); $0.rest("dev-access-key::") })
        return seeds
    }
}
