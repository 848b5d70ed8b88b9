"""Reading a whole file into a new ``bytes`` object in parallel (``fileio.read_whole``): the
object is made unfilled and each thread ``pread``s its span into it without the GIL, so the
copy from the page cache (and the first touch of the new memory) runs on every core. Python's
``read`` does the same work in one thread."""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdint cimport int64_t

cdef extern from *:
    """
    #if defined(_WIN32)
    #include <errno.h>
    static int64_t swf_pread_span(int fd, char* p, int64_t lo, int64_t hi) {
        (void)fd; (void)p; (void)lo; (void)hi; return -1 - ENOSYS;
    }
    #else
    #include <errno.h>
    #include <unistd.h>
    /* Fill p[lo:hi] with the file's bytes lo..hi: the end reached (< hi at the file's end),
       or -1 - errno. */
    static int64_t swf_pread_span(int fd, char* p, int64_t lo, int64_t hi) {
        while (lo < hi) {
            int64_t want = hi - lo;
            if (want > ((int64_t)1 << 28)) want = (int64_t)1 << 28;
            ssize_t got = pread(fd, p + lo, (size_t)want, (off_t)lo);
            if (got < 0) {
                if (errno == EINTR) continue;
                return -1 - errno;
            }
            if (got == 0) break;
            lo += got;
        }
        return lo;
    }
    #endif
    """
    int64_t swf_pread_span(int fd, char* p, int64_t lo, int64_t hi) nogil


def unfilled(int64_t size):
    """A new ``bytes`` object of ``size`` bytes, not yet filled (only :func:`fill` writes it,
    before anyone else sees it)."""
    return PyBytes_FromStringAndSize(NULL, size)


def fill(bytes data, int fd, int64_t lo, int64_t hi):
    """Read the file's bytes ``lo..hi`` into ``data[lo:hi]``: the offset reached (less than
    ``hi`` when the file ends sooner); raises OSError on a read error."""
    if lo < 0 or hi > len(data) or lo > hi:
        raise ValueError("fill: a span inside the object")
    cdef char* p = PyBytes_AS_STRING(data)
    cdef int64_t reached
    with nogil:
        reached = swf_pread_span(fd, p, lo, hi)
    if reached < 0:
        import os
        code = -1 - reached
        raise OSError(code, os.strerror(code))
    return reached
