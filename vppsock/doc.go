// Package vppsock is a govpp adapter (go.fd.io/govpp/adapter.VppAPI) for
// VPP's binary API socket that can write a window of requests in one
// system call.
//
// Why it exists: govpp's own socketclient flushes every request with its
// own write(2) and reads every reply through a 4 KiB buffer, one read(2)
// per reply. A cold sync of 50,000 services sends about 50,000 requests on
// one stream; at roughly 10 us of client CPU per request that per-message
// system-call cost is what keeps VPP's core waiting on a 2-core node. The
// govpp driver already sends requests in windows (send a window, then read
// its replies), so it can tell the adapter where a window starts and ends:
//
//	c.Hold()
//	for _, req := range window { stream.SendMsg(req) } // appended, not written
//	err := c.Release()                                  // the window in one write
//
// and the reader takes every reply a read returns, out of a 64 KiB buffer.
//
// A client that encodes its own requests can also take their replies past
// govpp's core: RouteReplies hands the replies of a range of contexts that
// the core never uses (under 1<<17) to a sink, the replies of one read
// together (the govpp driver's lane, vppcfg/govppdriver/lane.go).
//
// On the wire the client is what socketclient is (VPP 25.10's API socket):
// every message is framed by a 16-byte header (8 zero bytes, the data length
// as a 4-byte big-endian number, 4 zero bytes); a connection starts with
// sockclnt_create (the hard-coded message ID 15, context 123), whose reply
// carries the client index and the message table that GetMsgID answers
// from, and ends with sockclnt_delete (context 124), whose reply is waited
// for a bounded time. It reconnects the way govpp core's reconnect loop
// drives it: Disconnect, then Connect again on the same Client, which opens a
// new connection with a new message table and a fresh reader goroutine.
//
// Unlike socketclient it has no dependency but govpp (WaitReady polls for the
// socket file instead of using fsnotify), logs nothing (errors are returned
// by the call that meets them), and does not fall back to the unixpacket
// socket type of VPP 19.04 and older.
package vppsock
