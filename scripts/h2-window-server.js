// scripts/h2-window-captures.sh's Node.js server: HTTP/2 in the clear
// (prior knowledge) with Node's default settings, whose initial window
// (stream and connection) is 65,535 bytes; a request's body is read as it
// comes and answered with its length once it ends.
// Usage: node h2-window-server.js HOST PORT
"use strict";
const http2 = require("node:http2");
const [host, port] = process.argv.slice(2);
const server = http2.createServer();
server.on("stream", (stream) => {
  let bytes = 0;
  stream.on("data", (chunk) => { bytes += chunk.length; });
  stream.on("end", () => {
    stream.respond({ ":status": 200 });
    stream.end(`${bytes}\n`);
  });
});
server.listen(Number(port), host);
