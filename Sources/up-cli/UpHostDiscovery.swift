import HTTPTransport
import UpCore

/// The up hosts for an upload: `--up-host` when given; else, with a biz-server, the `upHosts` it
/// hands out with a token (one `POST /v1/uptoken`, which also checks the API key before any
/// file is read); else ``PutOptions/fallbackUpHost``.
enum UpHostDiscovery {
    static func resolve(
        _ options: PutOptions, fileSize: Int64, transport: any HTTPTransport
    ) async throws(CLIFailure) -> [String] {
        if !options.upHosts.isEmpty { return options.upHosts }
        guard case .biz(let url, let apiKey) = options.target else { return [PutOptions.fallbackUpHost] }
        var body = "{\"fsize\":\(fileSize)"
        if let key = options.key { body += ",\"key\":" + JSONValue.string(key).serialized() }
        body += "}"
        let request = TransportRequest(
            method: "POST", url: url + "/v1/uptoken",
            headers: [("Authorization", "Bearer " + apiKey), ("Content-Type", "application/json")],
            body: .bytes(Array(body.utf8)), timeout: .seconds(30), maxResponseBytes: 1 << 20)
        var attempt = 0
        while true {
            attempt += 1
            let response: TransportResponse
            do {
                response = try await transport.send(request)
            } catch {
                throw CLIFailure(.uploadFailed, "cannot reach biz-server at \(url): \(error)")
            }
            let reply = try? JSONValue.parse(response.body)
            let message = reply?["error"]?.stringValue ?? String(response.text.prefix(200))
            switch response.status {
            case 200:
                guard case .array(let items)? = reply?["upHosts"] else { return [PutOptions.fallbackUpHost] }
                let hosts = items.compactMap(\.stringValue).map { String($0.trimmingSuffix("/")) }
                return hosts.isEmpty ? [PutOptions.fallbackUpHost] : hosts
            case let status where (status == 429 || (500...599).contains(status)) && attempt < 4:
                let wait = response[header: "Retry-After"].flatMap { Int($0) }.map { min(max($0, 1), 10) } ?? attempt
                try? await Task.sleep(for: .seconds(wait))
            case 401, 403, 413:
                throw CLIFailure(.token, "biz-server refused the token request (\(response.status)): \(message)")
            default:
                throw CLIFailure(.uploadFailed, "biz-server answered \(response.status) to the token request: \(message)")
            }
        }
    }
}
