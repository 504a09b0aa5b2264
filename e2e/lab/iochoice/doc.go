// Package iochoice measures how a lab VPP should move packets between
// itself and the kernel, same run, against a kernel router on the same
// traffic: each of vppnode's I/O settings (TPACKET_V3 or V2 rings,
// interrupt or polling RX) forwards a client namespace's requests to a
// server namespace, and so does a namespace routing between two bridges,
// as a kube-proxy node's kernel does. Its test, TestIOChoices, runs with
// VPPSVC_LAB_IO_FIGURES=1 as root with VPPSVC_LAB_VPP (make lab-io);
// docs/performance.md ("The lab's VPP I/O") holds its figures, which chose
// vppnode.DefaultIO.
//
// It follows the lab's safety rules (package host): every name starts
// with its own prefix, "vsio", and its records live in its own state
// directory, so it runs beside a lab; it cleans what a killed run left
// before it starts and everything it made when it ends.
package iochoice
