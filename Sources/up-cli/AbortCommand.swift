import Foundation
import UpClient

/// `up-cli abort FILE …`: deletes the checkpoint `put` would use with the same arguments, and
/// aborts its v2 upload on the server (`UploadClient.abort`).
struct AbortCommand {
    let options: PutOptions
    let environment: [String: String]

    func run() async throws(CLIFailure) {
        let path = options.checkpointPath ?? CheckpointLocation.defaultPath(
            file: options.absoluteFile, key: options.key, target: options.targetIdentity, environment: environment)
        guard FileManager.default.fileExists(atPath: path) else {
            Console.err("up-cli: no checkpoint at \(path): nothing to abort")
            return
        }
        let transport = try PutCommand.transport()
        // No token request up front: the checkpoint names the up host of its upload.
        let hosts = options.configuredUpHosts
        let client = UploadClient(configuration: UploadClient.Configuration(upHosts: hosts), transport: transport)
        do {
            try await client.abort(checkpoint: path, token: options.tokenSource)
        } catch {
            throw CLIFailure(ExitCode(error), "abort failed: \(error)")
        }
        Console.err("up-cli: aborted; checkpoint \(path) deleted")
    }
}
