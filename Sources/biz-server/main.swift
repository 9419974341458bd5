import BizServer
import ServerShell

// `biz-server keys …` manages stored API keys, `biz-server migrate` copies the SQLite stores into
// the configured PostgreSQL database; everything else (arguments, configuration,
// signals, exit codes) is the shared shell's.
if CommandLine.arguments.dropFirst().first == "keys" { await KeysCommand.main(Array(CommandLine.arguments.dropFirst(2))) }
if CommandLine.arguments.dropFirst().first == "migrate" {
    await MigrateCommand.main(Array(CommandLine.arguments.dropFirst(2)))
}
await ServiceHost.main(BizServer.self, usage: usage)
