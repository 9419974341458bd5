import ServerShell
import UpServer

// `up-server migrate` moves the SQLite index and blob files into the configured PostgreSQL
// database and S3 store; everything else (arguments, configuration, signals, exit codes) is the
// shared shell's.
if CommandLine.arguments.dropFirst().first == "migrate" {
    await MigrateCommand.main(Array(CommandLine.arguments.dropFirst(2)))
}
await ServiceHost.main(UpServer.self, usage: usage)
