// glibc functions Swift's Glibc module leaves out because they need _GNU_SOURCE, declared here as
// glibc's <sched.h> declares them (libc is linked anyway).
#ifndef UPGATE_CLINUXEXTRAS_SHIM_H
#define UPGATE_CLINUXEXTRAS_SHIM_H

/// The CPU the calling thread runs on, or -1 (errno set). glibc 2.35+ reads it from rseq.
int sched_getcpu(void);

#endif
