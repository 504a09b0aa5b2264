// Package netexec is the lab's pod workload: a small server speaking the protocol of
// Kubernetes' agnhost netexec, so Kubernetes' own Service e2e checks translate one to one,
// and the bounded clients those checks and the lab's figures need.
//
// The server (server.go, http.go, udp.go, tcpline.go) answers
//   - HTTP: /hostname (and /hostName), /clientip (the ip:port the server saw), /echo?msg=&code=,
//     /dial?host=&port=&request=&protocol=http|udp&tries= (the server becomes the client and
//     answers {"responses":[...],"errors":[...]}), /serverport, /healthz, /readyz (503 once
//     terminating, or after /setreadiness?ready=false, this server's addition, until
//     ready=true), /shutdown;
//   - UDP, one datagram per command: "hostname", "clientip", "serverport", "echo <msg>";
//   - a TCP line port, this server's addition: the UDP commands one per line over one
//     connection, for the long-lived connection check (session.go).
//
// agnhost's package itself is not imported: it pulls an SCTP module the e2e module does not
// have, registers on the process-wide HTTP mux, keeps its settings in package variables, ends
// the process with os.Exit, and answers the UTS hostname that every lab pod shares with the
// host. Main reads the same container args and treats SIGTERM as agnhost does (--delay-shutdown);
// the Server runs as a function, any number of times in one process, and stops cleanly.
//
// Every client dials through a DialFunc, so the lab can dial from inside any namespace, and is
// bounded in count and time: requests by RequestTimeout and the context, UDP by UDPTries
// tries of UDPTryTimeout, loops by a maximum count.
package netexec
