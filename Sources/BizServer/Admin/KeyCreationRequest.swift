import UpCore

/// The body of `POST /v1/admin/keys`: `{"client": "demo", "name"?: "ci", "expires"?: "90d"}`.
///
/// As strict as the token request: a JSON object, each member once, nothing unknown (a misspelt
/// `expire` must not create a key that never expires), `null` the same as absent.
struct KeyCreationRequest: Sendable, Equatable {
    /// The `clients[]` id.
    var client: String
    /// The label.
    var name: String?
    /// A ``KeyLifetime``.
    var expires: String?

    /// Parses `body`.
    static func parse(_ body: [UInt8]) throws(BizError) -> KeyCreationRequest {
        let json: JSONValue
        do {
            json = try JSONValue.parse(body)
        } catch {
            throw .invalidRequest(body.isEmpty ? "body must be a JSON object with a client" : "body is not valid JSON")
        }
        guard case .object(let members) = json else { throw .invalidRequest("body must be a JSON object") }
        var client: String?
        var request = KeyCreationRequest(client: "")
        var seen = Set<String>()
        for (name, value) in members {
            guard seen.insert(name).inserted else { throw .invalidRequest("duplicate member '\(name)'") }
            let text: String?
            switch value {
            case .null: text = nil
            case .string(let string): text = string
            default: throw .invalidRequest("\(name) must be a string")
            }
            switch name {
            case "client": client = text
            case "name": request.name = text
            case "expires": request.expires = text
            default: throw .invalidRequest("unknown member '\(name)'")
            }
        }
        guard let client else { throw .invalidRequest("client is required (a clients[] id)") }
        request.client = client
        return request
    }
}
