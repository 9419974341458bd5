import ServerShell
import UpServer

// Everything else (arguments, configuration, signals, exit codes) is the shared shell's.
await ServiceHost.main(UpServer.self, usage: usage)
