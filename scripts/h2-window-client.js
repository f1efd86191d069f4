// scripts/h2-window-captures.sh's Node.js client: one GET over HTTP/2 in
// the clear (prior knowledge) with Node's default settings, whose
// initial window (stream and connection) is 65,535 bytes, the body read
// as it comes. Usage: node h2-window-client.js http://HOST:PORT PATH
"use strict";
const http2 = require("node:http2");
const [origin, path] = process.argv.slice(2);
const session = http2.connect(origin);
session.on("error", (e) => { console.error(e.message); process.exit(1); });
const req = session.request({ ":path": path });
let bytes = 0;
req.on("data", (chunk) => { bytes += chunk.length; });
req.on("end", () => {
  console.log(`${bytes} bytes`);
  session.close();
});
req.end();
