/*
 * cgp-gate's CUPTI injection library: records every kernel launch of the program it is loaded
 * into, at the program's own cost, into one trace file per process (docs/cupti.md, "Trace file
 * format"; read by src/cupti/trace.rs).
 *
 * How it is loaded: `CUDA_INJECTION64_PATH` names this library; the CUDA driver dlopens it when
 * the program initialises CUDA (cuInit) and calls its C symbol `InitializeInjection`. It then
 * dlopens libcupti itself (the path in CGP_GATE_CUPTI_LIBRARY), so it needs no CUDA headers or
 * libraries at build time (build.rs compiles it with the system C compiler; the binary embeds it:
 * src/cupti/inject.rs says why), and one build works with the CUPTI of CUDA 11.8 to 13.x.
 *
 * What it does: registers activity buffers (cuptiActivityRegisterCallbacks), enables
 * CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, writes each completed buffer's kernels as lines, sums
 * the records CUPTI dropped (cuptiActivityGetNumDroppedRecords), and at exit flushes
 * (atexit + cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)) and writes the trailer. A
 * failing CUPTI call is written as a failure line with cuptiGetResultString's text.
 *
 * The file: the header is written to a temporary file which is then linked to CGP_GATE_CUPTI_OUT
 * (no other process's file is ever replaced: when that name is taken, by another process of the
 * same program that initialised CUDA first, this one's is `<out>.<pid>`). Later lines are
 * appended whole, one write(2) per buffer of lines; the trailer comes last. A file without the
 * trailer is a process that died before the flush. The header carries the run's nonce
 * (CGP_GATE_CUPTI_NONCE, taken at load): a trace without it was not written in this run by this
 * library.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- The few CUPTI declarations used, as the headers define them (CUDA 11.8's, Debian's
 * libcupti-dev 11.8.87; unchanged through CUDA 13.5's, PyPI nvidia-cuda-cupti 13.5.25). ---- */

/* cupti_result.h: `typedef enum {...} CUptiResult;` (an int-sized enum). */
typedef int CUptiResult;
#define CUPTI_SUCCESS 0
#define CUPTI_ERROR_MAX_LIMIT_REACHED 12 /* cupti_result.h: no more records in the buffer */
/* cupti_activity.h: CUpti_ActivityKind, an int-sized enum. */
#define CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL 10
/* cupti_activity.h: CUpti_ActivityFlag. */
#define CUPTI_ACTIVITY_FLAG_FLUSH_FORCED 1
/* cuda.h: `typedef struct CUctx_st *CUcontext;`, used here only as an opaque pointer. */
typedef void *CUcontext;
/* cupti_activity.h: `typedef struct { CUpti_ActivityKind kind; } CUpti_Activity;`. */
typedef struct {
  int kind;
} CUpti_Activity;
/* cupti_activity.h: CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc. */
typedef void (*request_fn)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*complete_fn)(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                            size_t valid);

/* The CUPTI functions, looked up in the loaded libcupti (cupti_activity.h, cupti_result.h,
 * cupti_version.h). */
static struct {
  CUptiResult (*get_version)(uint32_t *);
  CUptiResult (*get_result_string)(CUptiResult, const char **);
  CUptiResult (*register_callbacks)(request_fn, complete_fn);
  CUptiResult (*enable)(int);
  CUptiResult (*get_next_record)(uint8_t *, size_t, CUpti_Activity **);
  CUptiResult (*get_num_dropped)(CUcontext, uint32_t, size_t *);
  CUptiResult (*flush_all)(uint32_t);
} cupti;

/* ---- Kernel activity records. ----
 *
 * CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL records are the newest CUpti_ActivityKernelN of the
 * loaded CUPTI (each header's CUpti_ActivityKind comment names it):
 *   CUPTI API 18 (CUDA 11.8)                         CUpti_ActivityKernel8  (200 bytes)
 *   CUPTI API 18 in libcupti.so.12 (CUDA 12.0), 19-28 (12.x)  Kernel9   (208 bytes)
 *   130000 (CUDA 13.0)                               CUpti_ActivityKernel10 (216 bytes)
 *   130100, 130200 (13.1, 13.2)                      CUpti_ActivityKernel11 (224 bytes)
 *   130300 (13.3)                                    CUpti_ActivityKernel12 (232 bytes)
 *   130400, 130500 (13.4, 13.5)                      CUpti_ActivityKernel13 (248 bytes)
 * (CUDA 12.0's libcupti answers cuptiGetVersion with 18, as 11.8's does: its symbols carry the
 * version node `libcupti.so.12`, which tells them apart.) Every field read here sits at the same
 * offset in all of them (and in Kernel6 and Kernel7): tests/fixtures/cupti/kernel-layouts.txt
 * lists each version's offsets as compiled from the real headers, and tests/cupti_lib.rs checks
 * this table against it and against the installed header. A CUPTI newer than 13.5 is read with
 * the newest layout known here (the fields read have not moved since Kernel6); the header's
 * `kernel_record` names the layout used, and its `cupti_version` the CUPTI. */
struct kernel_layout {
  uint32_t record; /* N of CUpti_ActivityKernelN */
  uint32_t size;
  uint32_t kind, registers, start, end, device, context, stream, grid[3], block[3];
  uint32_t static_shared, dynamic_shared, correlation, name, graph_id;
};
#define KERNEL_FIELDS 6, 16, 24, 40, 44, 48, {52, 56, 60}, {64, 68, 72}, 76, 80, 92, 104, 156
static const struct kernel_layout LAYOUTS[] = {
    {8, 200, 0, KERNEL_FIELDS},  {9, 208, 0, KERNEL_FIELDS},  {10, 216, 0, KERNEL_FIELDS},
    {11, 224, 0, KERNEL_FIELDS}, {12, 232, 0, KERNEL_FIELDS}, {13, 248, 0, KERNEL_FIELDS},
};
#define N_LAYOUTS (sizeof LAYOUTS / sizeof LAYOUTS[0])

/* The kernel record version of a CUPTI API version (0: older than CUDA 11.8, not supported). */
uint32_t cgp_gate_cupti_kernel_record(uint32_t api, int is_so12) {
  if (api < 18) return 0;
  if (api == 18) return is_so12 ? 9 : 8;
  if (api <= 28) return 9;
  if (api < 130000) return 9; /* between 12.9 Update 1 and 13.0: none released */
  if (api < 130100) return 10;
  if (api < 130300) return 11;
  if (api < 130400) return 12;
  return 13;
}

static const struct kernel_layout *layout_of(uint32_t record) {
  for (size_t i = 0; i < N_LAYOUTS; i++)
    if (LAYOUTS[i].record == record) return &LAYOUTS[i];
  return &LAYOUTS[N_LAYOUTS - 1];
}

/* ---- Output: a growable line buffer, JSON strings. ---- */
struct text {
  char *p;
  size_t len, cap;
  int failed;
};

static void text_reserve(struct text *t, size_t more) {
  if (t->failed || t->len + more + 1 <= t->cap) return;
  size_t cap = t->cap ? t->cap : 4096;
  while (cap < t->len + more + 1) cap *= 2;
  char *p = realloc(t->p, cap);
  if (!p) {
    t->failed = 1;
    return;
  }
  t->p = p;
  t->cap = cap;
}

static void text_add(struct text *t, const char *s, size_t n) {
  text_reserve(t, n);
  if (t->failed) return;
  memcpy(t->p + t->len, s, n);
  t->len += n;
  t->p[t->len] = 0;
}

static void text_printf(struct text *t, const char *fmt, ...) {
  char small[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n > 0) text_add(t, small, (size_t)n < sizeof small ? (size_t)n : sizeof small - 1);
}

/* The length of the valid UTF-8 sequence at s (at most n bytes), 0 when it is not one. */
static size_t utf8_len(const unsigned char *s, size_t n) {
  size_t len;
  uint32_t cp;
  if (s[0] < 0x80) return 1;
  if ((s[0] & 0xE0) == 0xC0) len = 2, cp = s[0] & 0x1F;
  else if ((s[0] & 0xF0) == 0xE0) len = 3, cp = s[0] & 0x0F;
  else if ((s[0] & 0xF8) == 0xF0) len = 4, cp = s[0] & 0x07;
  else return 0;
  if (len > n) return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
      cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return len;
}

/* A JSON string: quotes, backslashes and control characters escaped, invalid UTF-8 replaced
 * by U+FFFD (the reader requires UTF-8). */
static void text_json_string(struct text *t, const char *s) {
  text_add(t, "\"", 1);
  const unsigned char *u = (const unsigned char *)(s ? s : "");
  size_t n = strlen((const char *)u);
  for (size_t i = 0; i < n;) {
    unsigned char c = u[i];
    if (c == '"' || c == '\\') {
      char e[2] = {'\\', (char)c};
      text_add(t, e, 2);
      i++;
    } else if (c < 0x20 || c == 0x7F) {
      text_printf(t, "\\u%04x", c);
      i++;
    } else {
      size_t len = utf8_len(u + i, n - i);
      if (len == 0) {
        text_add(t, "\\ufffd", 6);
        i++;
      } else {
        text_add(t, (const char *)u + i, len);
        i += len;
      }
    }
  }
  text_add(t, "\"", 1);
}

static uint32_t rd32(const uint8_t *r, uint32_t off) {
  uint32_t v;
  memcpy(&v, r + off, sizeof v);
  return v;
}

static uint64_t rd64(const uint8_t *r, uint32_t off) {
  uint64_t v;
  memcpy(&v, r + off, sizeof v);
  return v;
}

/* One kernel record as its trace line (with the newline) appended to t. Exported (not static)
 * for the decoding tests (tests/cupti_lib.rs), which call it on records laid out by the real
 * headers. Returns 1 when the record was a kernel, 0 when it was another kind. */
int cgp_gate_cupti_kernel_line(const uint8_t *r, uint32_t record, struct text *t) {
  const struct kernel_layout *l = layout_of(record);
  if (rd32(r, l->kind) != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) return 0;
  uint16_t regs;
  memcpy(&regs, r + l->registers, sizeof regs);
  const char *name;
  memcpy(&name, r + l->name, sizeof name);
  text_add(t, "{\"m\":", 5);
  text_json_string(t, name);
  /* The headers declare grid, block and shared memory int32_t; they are never negative, and are
   * written unsigned so that no value can make a line the reader refuses. */
  text_printf(t, ",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u]", rd32(r, l->grid[0]),
              rd32(r, l->grid[1]), rd32(r, l->grid[2]), rd32(r, l->block[0]),
              rd32(r, l->block[1]), rd32(r, l->block[2]));
  text_printf(t, ",\"regs\":%u,\"smem_static\":%u,\"smem_dynamic\":%u", (unsigned)regs,
              rd32(r, l->static_shared), rd32(r, l->dynamic_shared));
  text_printf(t, ",\"start\":%llu,\"end\":%llu", (unsigned long long)rd64(r, l->start),
              (unsigned long long)rd64(r, l->end));
  text_printf(t, ",\"device\":%u,\"context\":%u,\"stream\":%u,\"corr\":%u,\"graph\":%u}\n",
              rd32(r, l->device), rd32(r, l->context), rd32(r, l->stream),
              rd32(r, l->correlation), rd32(r, l->graph_id));
  return 1;
}

/* For the decoding tests: the line of one record in a caller's buffer (NUL-terminated, cut at
 * cap); returns the line's full length. */
size_t cgp_gate_cupti_format_kernel(const uint8_t *r, uint32_t record, char *out, size_t cap) {
  struct text t = {0};
  if (!cgp_gate_cupti_kernel_line(r, record, &t) || t.failed) {
    free(t.p);
    if (cap) out[0] = 0;
    return 0;
  }
  if (cap) {
    size_t n = t.len < cap - 1 ? t.len : cap - 1;
    memcpy(out, t.p, n);
    out[n] = 0;
  }
  size_t len = t.len;
  free(t.p);
  return len;
}

/* ---- State. ---- */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int fd = -1;
static pid_t owner;           /* the process that opened fd (a fork's child writes nothing) */
static uint32_t record_version;
static uint64_t records;      /* kernel lines written */
static uint64_t dropped;      /* cuptiActivityGetNumDroppedRecords, summed */
static int tracing;           /* activity enabled: flush at exit */
static int closed;            /* trailer written */

static void write_all(const char *p, size_t n) {
  while (n > 0 && fd >= 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= (size_t)w;
  }
}

/* A failure line; caller holds the lock. */
static void failure_locked(const char *call, long long code, const char *message) {
  struct text t = {0};
  text_add(&t, "{\"error\":", 9);
  text_json_string(&t, call);
  text_printf(&t, ",\"code\":%lld,\"message\":", code);
  text_json_string(&t, message);
  text_add(&t, "}\n", 2);
  if (!t.failed) write_all(t.p, t.len);
  free(t.p);
}

static void cupti_failure(const char *call, CUptiResult r) {
  const char *s = NULL;
  if (!cupti.get_result_string || cupti.get_result_string(r, &s) != CUPTI_SUCCESS || !s)
    s = "(cuptiGetResultString gave no text)";
  pthread_mutex_lock(&lock);
  failure_locked(call, r, s);
  pthread_mutex_unlock(&lock);
}

/* ---- CUPTI callbacks. ---- */
#define BUFFER_SIZE (8u << 20)

static void buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
  void *p = NULL;
  if (posix_memalign(&p, 8, BUFFER_SIZE) != 0) p = NULL;
  *buffer = p;
  *size = p ? BUFFER_SIZE : 0;
  *max_records = 0;
}

static void buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                             size_t valid) {
  (void)size;
  struct text t = {0};
  uint64_t n = 0;
  CUpti_Activity *r = NULL;
  while (buffer && cupti.get_next_record(buffer, valid, &r) == CUPTI_SUCCESS)
    n += (uint64_t)cgp_gate_cupti_kernel_line((const uint8_t *)r, record_version, &t);
  size_t lost = 0;
  if (cupti.get_num_dropped(ctx, stream, &lost) != CUPTI_SUCCESS) lost = 0;
  pthread_mutex_lock(&lock);
  if (t.failed || closed || getpid() != owner) {
    /* Out of memory, or after the trailer: these records are lost, and counted so. */
    dropped += n;
  } else {
    write_all(t.p, t.len);
    records += n;
  }
  dropped += lost;
  pthread_mutex_unlock(&lock);
  free(t.p);
  free(buffer);
}

static void at_exit(void) {
  if (getpid() != owner || fd < 0) return;
  if (tracing) {
    CUptiResult r = cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (r != CUPTI_SUCCESS) cupti_failure("cuptiActivityFlushAll", r);
  }
  pthread_mutex_lock(&lock);
  struct text t = {0};
  text_printf(&t, "{\"end\":1,\"records\":%llu,\"dropped\":%llu}\n", (unsigned long long)records,
              (unsigned long long)dropped);
  if (!t.failed) write_all(t.p, t.len);
  free(t.p);
  closed = 1;
  close(fd);
  fd = -1;
  pthread_mutex_unlock(&lock);
}

/* ---- Start. ---- */

/* The run's nonce (CGP_GATE_CUPTI_NONCE: 32 lowercase hex digits), copied into the header; ""
 * when the variable is missing or malformed. The variable's value is then overwritten with zeros
 * in place (not unsetenv, which would change `environ` under the program's other threads), so
 * code that looks for it once CUDA is initialised finds nothing usable (docs/cupti.md, "What the
 * program under test can forge"). */
static char nonce[33];

static void take_nonce(void) {
  char *given = getenv("CGP_GATE_CUPTI_NONCE");
  if (!given) return;
  size_t n = strlen(given);
  if (n == 32 && strspn(given, "0123456789abcdef") == 32 && strspn(given, "0") != 32)
    memcpy(nonce, given, 33);
  memset(given, '0', n);
}

/* Create the trace file with its header: a temporary file linked to `out` (or `out.<pid>`). */
static int open_trace(const char *out, uint32_t version) {
  pid_t pid = getpid();
  char tmp[4096], alt[4096];
  const char *slash = strrchr(out, '/');
  int dir_len = slash ? (int)(slash - out + 1) : 0;
  if (snprintf(tmp, sizeof tmp, "%.*s.%s.tmp.%d", dir_len, out, slash ? slash + 1 : out,
               (int)pid) >= (int)sizeof tmp)
    return -1;
  int f = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (f < 0) return -1;
  char header[256];
  int n = snprintf(header, sizeof header,
                   "{\"cgp_gate_cupti\":2,\"cupti_version\":%u,\"kernel_record\":%u,\"pid\":%d,"
                   "\"nonce\":\"%s\"}\n",
                   version, record_version, (int)pid, nonce);
  fd = f;
  write_all(header, (size_t)n);
  int linked = link(tmp, out) == 0;
  if (!linked && errno == EEXIST && snprintf(alt, sizeof alt, "%s.%d", out, (int)pid) < (int)sizeof alt)
    linked = link(tmp, alt) == 0;
  int link_errno = errno;
  unlink(tmp);
  if (!linked) {
    close(f);
    fd = -1;
    errno = link_errno;
    return -1;
  }
  return 0;
}

static void *need(void *lib, const char *name, int *missing) {
  void *f = dlsym(lib, name);
  if (!f) *missing = 1;
  return f;
}

/* Load libcupti and look up the functions; NULL and the step that failed otherwise. */
static void *load_cupti(const char *path, const char **step, const char **why) {
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    *step = "dlopen";
    *why = dlerror();
    return NULL;
  }
  int missing = 0;
  cupti.get_version = need(lib, "cuptiGetVersion", &missing);
  cupti.get_result_string = need(lib, "cuptiGetResultString", &missing);
  cupti.register_callbacks = need(lib, "cuptiActivityRegisterCallbacks", &missing);
  cupti.enable = need(lib, "cuptiActivityEnable", &missing);
  cupti.get_next_record = need(lib, "cuptiActivityGetNextRecord", &missing);
  cupti.get_num_dropped = need(lib, "cuptiActivityGetNumDroppedRecords", &missing);
  cupti.flush_all = need(lib, "cuptiActivityFlushAll", &missing);
  if (missing) {
    *step = "dlsym";
    *why = "the library lacks a CUPTI activity function (cuptiActivity*): not a libcupti?";
    return NULL;
  }
  return lib;
}

int InitializeInjection(void) {
  static int done;
  if (__atomic_exchange_n(&done, 1, __ATOMIC_SEQ_CST)) return 1;
  const char *out = getenv("CGP_GATE_CUPTI_OUT");
  if (!out || !*out) return 1; /* nowhere to write: stay out of the program's way */
  owner = getpid();
  take_nonce();
  const char *path = getenv("CGP_GATE_CUPTI_LIBRARY");
  const char *step = NULL, *why = NULL;
  uint32_t version = 0;
  void *lib = NULL;
  if (!path || !*path) {
    step = "environment";
    why = "CGP_GATE_CUPTI_LIBRARY is not set: cgp-gate names the libcupti to load there";
  } else if ((lib = load_cupti(path, &step, &why)) != NULL) {
    if (cupti.get_version(&version) != CUPTI_SUCCESS) version = 0;
#ifdef __GLIBC__
    int is_so12 = dlvsym(lib, "cuptiGetVersion", "libcupti.so.12") != NULL;
#else /* no dlvsym (musl, where CUDA does not run anyway): the file's name */
    int is_so12 = strstr(path, ".so.12") != NULL;
#endif
    record_version = cgp_gate_cupti_kernel_record(version, is_so12);
    if (record_version == 0) {
      step = "cuptiGetVersion";
      why = "this CUPTI is older than CUDA 11.8's (API version 18); use the libcupti of CUDA 11.8 or newer";
    }
  }
  if (open_trace(out, version) != 0) {
    /* No file to say it in: the program's stderr, once (cgp-gate reports the missing file). */
    fprintf(stderr, "cgp-gate CUPTI injection library: cannot create %s: %s\n", out,
            strerror(errno));
    return 1;
  }
  atexit(at_exit);
  if (step) {
    pthread_mutex_lock(&lock);
    failure_locked(step, -1, why ? why : "");
    pthread_mutex_unlock(&lock);
    return 1;
  }
  CUptiResult r = cupti.register_callbacks(buffer_requested, buffer_completed);
  if (r != CUPTI_SUCCESS) {
    cupti_failure("cuptiActivityRegisterCallbacks", r);
    return 1;
  }
  r = cupti.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (r != CUPTI_SUCCESS) {
    cupti_failure("cuptiActivityEnable", r);
    return 1;
  }
  tracing = 1;
  return 1;
}
