"""IEC 60870-5-104 peers for scripts/scada-captures.sh, on c104 (the
Python binding of lib60870-C, MZ Automation's IEC 60870-5-104 stack).

  iec104-peers.py server ADDRESS   an outstation (common address 47) on
                                   ADDRESS:2404 until killed
  iec104-peers.py client ADDRESS   a controlling station's session

The outstation has a breaker's position (M_SP_NA_1, IOA 100) that it
reports on its own, a measurement (M_ME_NC_1, IOA 101) and a command
point (C_SC_NA_1, IOA 200) whose handler takes 150 ms before it
confirms. Its breaker changes 0.7, 2.5, 4.4 and 5.6 s after the
interrogation (told by a file the client touches): spontaneous reports.
The client acknowledges what it received with an S-frame 1 s later
(t2, lib60870's unit is the second), so the reports after the first
follow an S-frame that asked nothing. The outstation tests the link
after 2 s of silence (t3): its own TESTFR act.
"""
import os
import sys
import time

import c104

ROLE, ADDRESS = sys.argv[1], sys.argv[2]
CA = 47
STARTED = os.environ.get("IEC104_STARTED", "/tmp/rttdoc-iec104-started")


def server():
    srv = c104.Server(ip=ADDRESS, port=2404, tick_rate_ms=50)
    # The outstation tests an idle link after 2 s (t3): its own TESTFR.
    srv.protocol_parameters.keep_alive_interval = 2
    station = srv.add_station(common_address=CA)
    breaker = station.add_point(io_address=100, type=c104.Type.M_SP_NA_1)
    station.add_point(io_address=101, type=c104.Type.M_ME_NC_1)
    command = station.add_point(io_address=200, type=c104.Type.C_SC_NA_1)

    def on_command(
        point: c104.Point, previous_info: c104.Information, message: c104.IncomingMessage
    ) -> c104.ResponseState:
        time.sleep(0.15)
        return c104.ResponseState.SUCCESS

    command.on_receive(callable=on_command)
    srv.start()
    while not os.path.exists(STARTED):
        time.sleep(0.01)
    began = time.monotonic()
    for at, value in [(0.7, True), (2.5, False), (4.4, True), (5.6, False)]:
        time.sleep(max(0, began + at - time.monotonic()))
        breaker.value = value
        breaker.transmit(cause=c104.Cot.SPONTANEOUS)
    while True:
        time.sleep(1)


def client():
    cl = c104.Client(tick_rate_ms=50, command_timeout_ms=2000)
    conn = cl.add_connection(ip=ADDRESS, port=2404, init=c104.Init.NONE)
    conn.protocol_parameters.confirm_interval = 1
    station = conn.add_station(common_address=CA)
    command = station.add_point(io_address=200, type=c104.Type.C_SC_NA_1)
    measured = station.add_point(io_address=101, type=c104.Type.M_ME_NC_1)
    cl.start()
    # Open: connected and data transfer started (STARTDT con received).
    deadline = time.monotonic() + 5
    while conn.state != c104.ConnectionState.OPEN and time.monotonic() < deadline:
        time.sleep(0.01)

    time.sleep(0.3)
    conn.interrogation(common_address=CA, cause=c104.Cot.ACTIVATION, qualifier=c104.Qoi.STATION)
    open(STARTED, "w").close()
    # The reports come; between them, a command and a read.
    time.sleep(1.4)
    command.value = True
    command.transmit(cause=c104.Cot.ACTIVATION)
    time.sleep(1.4)
    measured.read()
    # Past the last report, idle past the outstation's t3: its TESTFR
    # act, the client's con.
    time.sleep(6)
    conn.disconnect()
    cl.stop()


server() if ROLE == "server" else client()
