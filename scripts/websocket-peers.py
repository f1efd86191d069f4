"""The WebSocket server and clients of scripts/websocket-captures.sh
(python's `websockets`, which negotiates permessage-deflate). The server
pings every client every second (the library's keep-alive, 20 s by
default) and serves three paths:

  /rpc   answers each message 100 ms after it comes (its work)
  /feed  pushes a message at random times 0.3-1.5 s apart
  /chat  passes each message on to the other clients

Run as `server` in the server's namespace, as `clients` in the client's:
one /rpc client asking four questions, one /feed reader, and two /chat
clients, one talking and one listening."""
import asyncio
import random
import sys

import websockets

URL = "ws://10.81.2.1:8765"
chatters = set()


async def handler(ws, path):
    if path == "/rpc":
        async for msg in ws:
            await asyncio.sleep(0.1)
            await ws.send("answer to " + msg)
    elif path == "/feed":
        try:
            while True:
                await asyncio.sleep(random.uniform(0.3, 1.5))
                await ws.send("tick %f" % random.random())
        except websockets.ConnectionClosed:
            pass
    else:
        chatters.add(ws)
        try:
            async for msg in ws:
                for other in list(chatters - {ws}):
                    await other.send(msg)
        finally:
            chatters.discard(ws)


async def serve():
    async with websockets.serve(handler, "10.81.2.1", 8765, ping_interval=1.0):
        await asyncio.Future()


async def rpc():
    async with websockets.connect(URL + "/rpc", ping_interval=None) as ws:
        for i in range(4):
            await ws.send(f"question {i}")
            await ws.recv()
            await asyncio.sleep(0.3)


async def read_for(path, seconds):
    """Reads what the server sends for `seconds`, then closes."""
    async with websockets.connect(URL + path, ping_interval=None) as ws:
        end = asyncio.get_running_loop().time() + seconds
        try:
            while True:
                left = end - asyncio.get_running_loop().time()
                await asyncio.wait_for(ws.recv(), max(left, 0))
        except asyncio.TimeoutError:
            pass


async def talk():
    await asyncio.sleep(0.5)
    async with websockets.connect(URL + "/chat", ping_interval=None) as ws:
        for i in range(4):
            await ws.send(f"hello {i}")
            await asyncio.sleep(0.9)


async def clients():
    await rpc()
    await asyncio.gather(read_for("/feed", 6), read_for("/chat", 5), talk())


random.seed(7)
asyncio.run(serve() if sys.argv[1] == "server" else clients())
