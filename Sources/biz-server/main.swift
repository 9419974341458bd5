import BizServer
import ServerShell

// Everything else (arguments, configuration, signals, exit codes) is the shared shell's.
await ServiceHost.main(BizServer.self, usage: usage)
