/*
 * test_report_html.c - the HTML report's timeline in headless Chromium
 * on the 2000-step demo: loaded whole and zoomed to a 1 ms window (the
 * page reads #t0=..&t1=.. from its URL), its DOM read back after the
 * scripts ran and compared with the trace's own slices through SQL; two
 * screenshots decoded and compared. The page driven by a script as a
 * user would (wheel, keys, clicks, a flow link, a merged block). And the
 * data embedded in the page cannot end its <script> block, whatever the
 * names in the trace.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "harness.h"
#include "tp/tputil.h"

#define CHROMIUM "/usr/bin/chromium"
#define SHOT_W 1400
#define SHOT_H 1000

/* Runs headless Chromium on url with a flag (--dump-dom or
 * --screenshot=PATH) and maybe another (NULL: none); stdout goes to
 * out_path. Asserts it exits 0. */
static void chromium(const char *url, const char *flag, const char *flag2,
                     const char *out_path) {
  char profile[600], size[64], pflag[700];
  snprintf(profile, sizeof(profile), "%s/chromium-profile", gp_test_tmpdir());
  snprintf(pflag, sizeof(pflag), "--user-data-dir=%s", profile);
  snprintf(size, sizeof(size), "--window-size=%d,%d", SHOT_W, SHOT_H);
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = open("/dev/null", O_WRONLY);
    if (o < 0 || e < 0)
      _exit(126);
    dup2(o, 1);
    dup2(e, 2);
    execl(CHROMIUM, CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
          "--disable-background-networking", "--disable-component-update",
          "--disable-sync", "--no-first-run", "--hide-scrollbars", pflag, size,
          flag, flag2 ? flag2 : url, flag2 ? url : (char *)NULL, (char *)NULL);
    _exit(127);
  }
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
    ;
  ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* The DOM of url after its scripts ran (malloc'ed). */
static char *dump_dom(const char *url, const char *name) {
  const char *path = gp_test_path(3, name);
  chromium(url, "--dump-dom", NULL, path);
  char *d = tp_read_file(path, NULL);
  ASSERT_NOT_NULL(d);
  ASSERT(strstr(d, "data-ready=\"1\"") != NULL); /* the scripts ran */
  /* What the script drew, without the script's own text. */
  char *end = strstr(d, "var TL=");
  ASSERT_NOT_NULL(end);
  *end = '\0';
  return d;
}

/* The element (from "<rect" to its end) holding attr, or NULL. */
static char *element_with(const char *d, const char *attr, char *buf,
                          size_t size) {
  const char *p = strstr(d, attr);
  if (!p)
    return NULL;
  const char *b = p;
  while (b > d && strncmp(b, "<rect", 5) != 0)
    b--;
  const char *e = strchr(p, '>');
  size_t n = (size_t)(e - b) + 1;
  snprintf(buf, size, "%.*s", (int)(n < size ? n : size - 1), b);
  return buf;
}

/* The numeric value of attribute name (like "y") in element el. */
static double attr_num(const char *el, const char *name) {
  char k[64];
  snprintf(k, sizeof(k), " %s=\"", name);
  const char *p = strstr(el, k);
  ASSERT_NOT_NULL(p);
  return strtod(p + strlen(k), NULL);
}

/* The axis tick labels of a DOM, in ns (parsed from "1.3001 s" etc.),
 * into t[] (at most n); returns how many. *step gets data-step. */
static int ticks(const char *d, double *t, int n, double *step) {
  static const char head[] = "<g class=\"axis\" data-step=\"";
  const char *ax = strstr(d, head);
  ASSERT_NOT_NULL(ax);
  *step = strtod(ax + strlen(head), NULL);
  ASSERT(*step >= 1);
  const char *end = strstr(ax, "</g>");
  int k = 0;
  for (const char *p = ax;
       (p = strstr(p, "class=\"tick\"")) && p < end && k < n; p++) {
    const char *v = strchr(p, '>') + 1;
    char *u;
    double x = strtod(v, &u);
    ASSERT(*u == ' ');
    u++;
    double mul = strncmp(u, "ns<", 3) == 0   ? 1
                 : strncmp(u, "us<", 3) == 0 ? 1e3
                 : strncmp(u, "ms<", 3) == 0 ? 1e6
                 : strncmp(u, "s<", 2) == 0  ? 1e9
                                             : -1;
    ASSERT(mul > 0);
    t[k++] = x * mul;
  }
  return k;
}

/* The ticks are step apart (to the labels' rounding) within [lo, hi]. */
static void check_ticks(const double *t, int n, double step, double lo,
                        double hi) {
  ASSERT(n >= 3);
  for (int i = 0; i < n; i++) {
    ASSERT(t[i] >= lo - step && t[i] <= hi + step);
    if (i)
      ASSERT(t[i] - t[i - 1] > step * 0.99 && t[i] - t[i - 1] < step * 1.01);
  }
}

/* A decoded PNG: 8-bit RGB or RGBA pixels, as Chromium writes them. */
typedef struct png {
  uint32_t w, h, bpp;
  unsigned char *px; /* w * h * bpp */
} png;

static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         p[3];
}

/* Decodes the PNG file at path (asserting it is one) into *img. */
static void png_read(const char *path, png *img) {
  size_t size;
  unsigned char *f = (unsigned char *)tp_read_file(path, &size);
  ASSERT_NOT_NULL(f);
  ASSERT(size > 33 && memcmp(f, "\x89PNG\r\n\x1a\n", 8) == 0);
  ASSERT(memcmp(f + 12, "IHDR", 4) == 0);
  img->w = be32(f + 16);
  img->h = be32(f + 20);
  ASSERT_EQ(f[24], 8);              /* bit depth */
  ASSERT(f[25] == 2 || f[25] == 6); /* RGB or RGBA */
  ASSERT_EQ(f[28], 0);              /* not interlaced */
  img->bpp = f[25] == 2 ? 3 : 4;
  size_t stride = (size_t)img->w * img->bpp, raw_n = (stride + 1) * img->h;
  unsigned char *raw = malloc(raw_n);
  img->px = malloc(stride * img->h);
  ASSERT(raw && img->px);
  z_stream z;
  memset(&z, 0, sizeof(z));
  ASSERT_EQ(inflateInit(&z), Z_OK);
  z.next_out = raw;
  z.avail_out = (uInt)raw_n;
  for (size_t o = 8; o + 12 <= size;) {
    uint32_t n = be32(f + o);
    ASSERT(o + 12 + n <= size);
    if (memcmp(f + o + 4, "IDAT", 4) == 0) {
      z.next_in = f + o + 8;
      z.avail_in = n;
      int rc = inflate(&z, Z_NO_FLUSH);
      ASSERT(rc == Z_OK || rc == Z_STREAM_END);
    }
    o += 12 + n;
  }
  ASSERT_EQ((size_t)z.total_out, raw_n);
  inflateEnd(&z);
  /* Undo the scanline filters (PNG spec, section 9). */
  for (uint32_t y = 0; y < img->h; y++) {
    unsigned char *in = raw + y * (stride + 1), *out = img->px + y * stride;
    const unsigned char *up = y ? out - stride : NULL;
    for (size_t x = 0; x < stride; x++) {
      int a = x >= img->bpp ? out[x - img->bpp] : 0, b = up ? up[x] : 0,
          c = up && x >= img->bpp ? up[x - img->bpp] : 0, p = a + b - c;
      int pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
      int pred[5] = {0, a, b, (a + b) / 2,
                     pa <= pb && pa <= pc ? a
                     : pb <= pc           ? b
                                          : c};
      ASSERT(in[0] <= 4);
      out[x] = (unsigned char)(in[1 + x] + pred[in[0]]);
    }
  }
  free(raw);
  free(f);
}

/* Distinct colours among img's first 4096 (a lower bound of the count). */
static int colours(const png *img) {
  uint32_t seen[4096];
  int n = 0;
  for (size_t i = 0; i < (size_t)img->w * img->h && n < 4096; i++) {
    const unsigned char *p = img->px + i * img->bpp;
    uint32_t c = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
    int k = 0;
    while (k < n && seen[k] != c)
      k++;
    if (k == n)
      seen[n++] = c;
  }
  return n;
}

TEST(report_html_timeline_zooms) {
  if (access(CHROMIUM, X_OK) != 0)
    SKIP("chromium is not installed (scripts/install-deps.sh installs it)");
  const char *trace = gp_test_path(0, "demo2000.pftrace");
  const char *html = gp_test_path(1, "report.html");
  char *out, *err;
  ASSERT_EQ(
      tp_cli(&out, &err, "demo", "-q", "--steps", "2000", "-o", trace, NULL),
      0);
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "report", trace, "--html", html, NULL), 0);
  free(out);
  free(err);
  /* The slices are embedded once, as data, not as markup. */
  char *page = tp_read_file(html, NULL);
  ASSERT_NOT_NULL(page);
  ASSERT_EQ(strstr(page, "var TL=") != NULL, 1);
  ASSERT(strstr(strstr(page, "var TL=") + 1, "var TL=") == NULL);
  ASSERT(strstr(page, "<svg id=timeline></svg>") != NULL);
  free(page);
  gp_tp *tp;
  ASSERT_EQ(gp_tp_open(trace, NULL, &tp, NULL), 0);
  /* The 1 ms window: from 100 us before step 1000's "forward" range. */
  int64_t t0 = tp_int(tp, "SELECT s.ts - b.start_ts - 100000 FROM slice s, "
                          "trace_bounds b WHERE s.name = 'forward' ORDER BY "
                          "s.ts LIMIT 1 OFFSET 999");
  int64_t t1 = t0 + 1000000;
  char url[800], frag[200];
  snprintf(frag, sizeof(frag), "#t0=%" PRId64 "&t1=%" PRId64, t0, t1);
  snprintf(url, sizeof(url), "file://%s", html);
  char *full = dump_dom(url, "full.html");
  strcat(url, frag);
  char *zoom = dump_dom(url, "zoom.html");

  /* Zoomed: every GPU slice of the window 5 us or longer (5 px or more
   * at this width) is an element of its own with its name. */
  char sql[1024];
  snprintf(sql, sizeof(sql),
           "SELECT s.id, s.name FROM gpu_slice s, trace_bounds b WHERE "
           "s.ts >= b.start_ts + %" PRId64 " AND s.ts + s.dur <= b.start_ts + "
           "%" PRId64 " AND s.dur >= 5000 ORDER BY s.ts",
           t0, t1);
  gp_tp_rows *rows;
  ASSERT_EQ(gp_tp_query(tp, sql, &rows, NULL), 0);
  int kernels = 0, merged_at_full = 0;
  while (gp_tp_rows_next(rows, NULL) == 1) {
    char attr[64], want[400], el[1024];
    snprintf(attr, sizeof(attr), "data-id=\"%" PRId64 "\"",
             gp_tp_rows_int(rows, 0));
    snprintf(want, sizeof(want), "data-name=\"%s\"", gp_tp_rows_text(rows, 1));
    if (!element_with(zoom, attr, el, sizeof(el)))
      gp_test_fail(__FILE__, __LINE__, "GPU slice %s (%s) is not drawn", attr,
                   want);
    ASSERT(strstr(el, want) != NULL);
    ASSERT(strstr(el, "class=\"s c") != NULL && strstr(el, "data-n=\"1\""));
    kernels += strstr(el, "class=\"s c0") != NULL;
    merged_at_full += strstr(full, attr) == NULL;
  }
  gp_tp_rows_destroy(rows);
  ASSERT(kernels >= 8);
  /* At full width some of them are inside "N slices" blocks. */
  ASSERT(merged_at_full >= 1);
  ASSERT(strstr(full, "class=\"m c0\"") != NULL);

  /* The axis: ticks a round step apart, within the window shown; the
   * step and the labels change with the zoom. */
  double tf[64], tz[64], sf, sz;
  int nf = ticks(full, tf, 64, &sf), nz = ticks(zoom, tz, 64, &sz);
  double span = (double)tp_int(tp, "SELECT end_ts - start_ts FROM "
                                   "trace_bounds");
  check_ticks(tf, nf, sf, 0, span);
  check_ticks(tz, nz, sz, (double)t0, (double)t1);
  ASSERT(sf >= 100 * sz);
  ASSERT(sz <= 1e6 / 4);
  ASSERT(tz[0] > tf[0]);

  /* Nested ranges on rows of their own: step 1000 at depth 0, its
   * "forward" at depth 1, below it, in the lane named after the thread
   * and process that recorded them (names from the thread table). */
  char el0[1024], el1[1024], lane[400];
  ASSERT_NOT_NULL(
      element_with(zoom, "data-name=\"training step 1000\"", el0, sizeof(el0)));
  ASSERT_NOT_NULL(
      element_with(zoom, "data-name=\"forward\"", el1, sizeof(el1)));
  ASSERT(strstr(el0, "class=\"s c4") && strstr(el0, "data-d=\"0\""));
  ASSERT(strstr(el1, "class=\"s c4") && strstr(el1, "data-d=\"1\""));
  ASSERT(attr_num(el1, "y") > attr_num(el0, "y"));
  ASSERT_EQ(gp_tp_query(tp,
                        "SELECT t.name || ' ' || t.tid || ' (' || p.name || "
                        "' ' || p.pid || ')' FROM slice s JOIN thread_track "
                        "tt ON tt.id = s.track_id JOIN thread t USING (utid) "
                        "JOIN process p USING (upid) WHERE s.name = "
                        "'forward' LIMIT 1",
                        &rows, NULL),
            0);
  ASSERT_EQ(gp_tp_rows_next(rows, NULL), 1);
  snprintf(lane, sizeof(lane), "<g class=\"lane\" data-lane=\"%s\"",
           gp_tp_rows_text(rows, 0));
  gp_tp_rows_destroy(rows);
  const char *hl = strstr(zoom, lane);
  ASSERT_NOT_NULL(hl);
  ASSERT(strstr(hl, "data-name=\"forward\"") <
             strstr(hl + 1, "<g class=\"lane\"") ||
         !strstr(hl + 1, "<g class=\"lane\""));
  /* gpuperf's own 0 ns marker has no lane. */
  ASSERT(strstr(full, "gpuperf host") == NULL);

  /* Screenshots at both zoom levels: PNGs of the window's size that
   * show a picture, and not the same one. */
  const char *shots[2] = {"full.png", "zoom.png"};
  png img[2];
  for (int i = 0; i < 2; i++) {
    char flag[700];
    const char *path = gp_test_path(2, shots[i]);
    snprintf(flag, sizeof(flag), "--screenshot=%s", path);
    snprintf(url, sizeof(url), "file://%s%s", html, i ? frag : "");
    chromium(url, flag, NULL, gp_test_path(3, "shot.out"));
    png_read(gp_test_path(2, shots[i]), &img[i]);
    ASSERT_EQ(img[i].w, SHOT_W);
    ASSERT_EQ(img[i].h, SHOT_H);
    ASSERT(colours(&img[i]) >= 16);
  }
  ASSERT_EQ(img[0].bpp, img[1].bpp);
  size_t differ = 0;
  for (size_t i = 0; i < (size_t)SHOT_W * SHOT_H; i++)
    differ +=
        memcmp(img[0].px + i * img[0].bpp, img[1].px + i * img[1].bpp, 3) != 0;
  ASSERT(differ > (size_t)SHOT_W * SHOT_H / 200);
  free(img[0].px);
  free(img[1].px);
  gp_tp_close(tp);
  free(full);
  free(zoom);
}

static int count(const char *s, const char *needle) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
    n++;
  return n;
}

/* A kernel named to break out of the page's data: it stays data. */
TEST(report_html_data_cannot_end_its_script) {
  if (access(CHROMIUM, X_OK) != 0)
    SKIP("chromium is not installed (scripts/install-deps.sh installs it)");
  static const char evil[] =
      "</script><!--<script>document.title='pwned'</script>\xe2\x80\xa8\"k";
  tg t;
  tg_init(&t);
  tg_packet(&t, 100, 1, 0);
  gp__pb_begin(&t.w, 53); /* gpu_render_stage_event */
  gp__pb_uint(&t.w, 1, 1);
  gp__pb_uint(&t.w, 2, 50000);
  gp__pb_int(&t.w, 11, 0);
  gp__pb_uint(&t.w, 3, 0); /* hw_queue_id */
  gp__pb_uint(&t.w, 4, 0); /* stage_id */
  gp__pb_string(&t.w, 17, evil);
  gp__pb_end(&t.w);
  tg_end(&t);
  const char *trace = gp_test_path(0, "evil.pftrace");
  const char *html = gp_test_path(1, "evil.html");
  tg_write(&t, trace);
  tg_fini(&t);
  char *out, *err;
  ASSERT_EQ(tp_cli(&out, &err, "report", trace, "--html", html, NULL), 0);
  free(out);
  free(err);
  char *page = tp_read_file(html, NULL);
  ASSERT_NOT_NULL(page);
  /* Our two script blocks and nothing else can open or close one. */
  ASSERT_EQ(count(page, "<script"), 2);
  ASSERT_EQ(count(page, "</script"), 2);
  ASSERT(strstr(page, "<!--") == NULL);
  /* U+2028 is harmless in HTML text, not in a script. */
  const char *data = strstr(page, "var TL=");
  ASSERT_NOT_NULL(data);
  const char *u2028 = strstr(data, "\xe2\x80\xa8");
  ASSERT(!u2028 || u2028 > strstr(data, "</script"));
  free(page);
  char url[700];
  snprintf(url, sizeof(url), "file://%s", html);
  char *d = dump_dom(url, "evil-dom.html");
  ASSERT_EQ(count(d, "<script"), 1); /* ours, before the data */
  ASSERT(strstr(d, "pwned</title>") == NULL);
  /* The kernel is drawn, under its name. */
  const char *k = strstr(d, "class=\"s c");
  ASSERT_NOT_NULL(k);
  ASSERT(strstr(k, "document.title='pwned'") != NULL);
  free(d);
}

/* Drives the page as a user would, from a script appended to it: wheel,
 * key, click on a kernel, its first flow link, a merged block. Each step
 * appends "name v0 v1 selected-id flows" to <pre id=LOG>; the details
 * panel's text is kept as the pre's data-det. Headless Chromium draws
 * no frames, so requestAnimationFrame is a timer here. */
static const char driver[] =
    "<script>window.requestAnimationFrame=function(f){return "
    "setTimeout(f,0)};(function(){var g=[],s=document.getElementById("
    "'timeline'),det='';function st(n){var h=/sel=([0-9]+)/.exec("
    "location.hash);g.push(n+' '+s.dataset.v0+' '+s.dataset.v1+' '+(h?h[1]:"
    "'-')+' '+document.querySelectorAll('path.flow').length)}"
    "function down(el,x,y){el.dispatchEvent(new MouseEvent('mousedown',"
    "{clientX:x,clientY:y,bubbles:true}));window.dispatchEvent(new "
    "MouseEvent('mouseup',{clientX:x,clientY:y,bubbles:true}))}"
    "var q=[function(){st('start');var r=s.getBoundingClientRect();"
    "s.dispatchEvent(new WheelEvent('wheel',{deltaY:-300,clientX:r.left+"
    "r.width/2,clientY:r.top+40,bubbles:true,cancelable:true}))},"
    "function(){st('wheel');document.dispatchEvent(new KeyboardEvent("
    "'keydown',{key:'d',bubbles:true}))},function(){st('key');"
    "var e=document.querySelector('rect.s.c0'),b=e.getBoundingClientRect();"
    "down(e,b.left+1,b.top+2)},function(){st('click');det=document."
    "getElementById('tldet').textContent;document.querySelector('#tldet "
    "a').click()},function(){st('flow');document.getElementById('tlall')."
    "click()},function(){st('all');var m=document.querySelector('rect.m'),"
    "b=m.getBoundingClientRect();g.push('block '+m.dataset.t0+' '+m.dataset."
    "t1);down(m,b.left,b.top+2)},function(){st('zoom');var p=document."
    "createElement('pre');p.id='LOG';p.dataset.det=det;p.textContent="
    "g.join('\\n');document.body.appendChild(p)}];function next(){q.shift()"
    "();if(q.length)setTimeout(next,50)}setTimeout(next,50)})();</script>";

typedef struct step {
  double v0, v1;
  long sel;
  int flows;
} step;

/* The step called name in the log. */
static step log_step(const char *log, const char *name) {
  char k[32];
  snprintf(k, sizeof(k), "\n%s ", name);
  const char *p = strstr(log, k);
  if (!p && strncmp(log, k + 1, strlen(k + 1)) == 0)
    p = log - 1;
  ASSERT_NOT_NULL(p);
  step s;
  char sel[32];
  ASSERT_EQ(
      sscanf(p + strlen(k), "%lf %lf %31s %d", &s.v0, &s.v1, sel, &s.flows), 4);
  s.sel = sel[0] == '-' ? -1 : strtol(sel, NULL, 10);
  return s;
}

TEST(report_html_timeline_interactions) {
  if (access(CHROMIUM, X_OK) != 0)
    SKIP("chromium is not installed (scripts/install-deps.sh installs it)");
  const char *trace = gp_test_path(0, "demo.pftrace");
  const char *html = gp_test_path(1, "report.html");
  char *out, *err;
  ASSERT_EQ(tp_cli(&out, &err, "demo", "-q", "--steps", "3", "-o", trace, NULL),
            0);
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "report", trace, "--html", html, NULL), 0);
  free(out);
  free(err);
  /* The page with the driver appended. */
  size_t n;
  char *page = tp_read_file(html, &n);
  ASSERT_NOT_NULL(page);
  char *end = strstr(page, "</body></html>");
  ASSERT_NOT_NULL(end);
  *end = '\0';
  const char *driven = gp_test_path(2, "driven.html");
  FILE *f = fopen(driven, "w");
  ASSERT_NOT_NULL(f);
  fprintf(f, "%s%s</body></html>\n", page, driver);
  ASSERT_EQ(fclose(f), 0);
  free(page);
  char url[700], dom[600];
  snprintf(url, sizeof(url), "file://%s", driven);
  snprintf(dom, sizeof(dom), "%s/driven-dom.html", gp_test_tmpdir());
  /* Virtual time lets the driver's timers run before the DOM is read. */
  chromium(url, "--dump-dom", "--virtual-time-budget=10000", dom);
  char *d = tp_read_file(dom, NULL);
  ASSERT_NOT_NULL(d);
  char *log = strstr(d, "<pre id=\"LOG\"");
  if (!log)
    gp_test_fail(__FILE__, __LINE__, "the driver did not finish");
  ASSERT_NOT_NULL(log);
  log = strchr(log, '>') + 1;
  gp_tp *tp;
  ASSERT_EQ(gp_tp_open(trace, NULL, &tp, NULL), 0);
  double span = (double)tp_int(tp, "SELECT end_ts - start_ts FROM "
                                   "trace_bounds");
  step s0 = log_step(log, "start"), sw = log_step(log, "wheel"),
       sk = log_step(log, "key"), sc = log_step(log, "click"),
       sf = log_step(log, "flow"), sa = log_step(log, "all"),
       sz = log_step(log, "zoom");
  ASSERT(s0.v0 == 0 && s0.v1 >= span - 1);
  /* Wheel up zooms in around the pointer, D pans by a fifth. */
  ASSERT(sw.v1 - sw.v0 < (s0.v1 - s0.v0) * 0.6);
  ASSERT(sw.v0 < span / 2 && sw.v1 > span / 2);
  double w = sw.v1 - sw.v0;
  ASSERT(sk.v0 > sw.v0 + w * 0.19 && sk.v0 < sw.v0 + w * 0.21);
  /* A click on a kernel selects it: its details hold its arguments from
   * the args table, and its flows (from the flow table) are drawn. */
  ASSERT(sc.sel >= 0);
  char sql[400];
  snprintf(sql, sizeof(sql),
           "SELECT count(*) FROM flow WHERE slice_in = %ld OR slice_out = "
           "%ld",
           sc.sel, sc.sel);
  ASSERT_EQ(sc.flows, (int)tp_int(tp, sql));
  ASSERT(sc.flows >= 1);
  snprintf(sql, sizeof(sql),
           "SELECT a.display_value FROM slice s JOIN args a USING "
           "(arg_set_id) WHERE s.id = %ld AND a.key = 'kernel_name'",
           sc.sel);
  gp_tp_rows *rows;
  ASSERT_EQ(gp_tp_query(tp, sql, &rows, NULL), 0);
  ASSERT_EQ(gp_tp_rows_next(rows, NULL), 1);
  char *det = strstr(d, "data-det=\"");
  ASSERT_NOT_NULL(det);
  ASSERT(strstr(det, gp_tp_rows_text(rows, 0)) != NULL);
  gp_tp_rows_destroy(rows);
  /* Its first flow link selects the other end, a slice it has a flow
   * with, and brings it into view. */
  snprintf(sql, sizeof(sql),
           "SELECT count(*) FROM flow WHERE (slice_in = %ld AND slice_out = "
           "%ld) OR (slice_out = %ld AND slice_in = %ld)",
           sc.sel, sf.sel, sc.sel, sf.sel);
  ASSERT_EQ(tp_int(tp, sql), 1);
  snprintf(sql, sizeof(sql),
           "SELECT s.ts - b.start_ts FROM slice s, trace_bounds b WHERE "
           "s.id = %ld",
           sf.sel);
  double ts = (double)tp_int(tp, sql);
  ASSERT(ts >= sf.v0 && ts <= sf.v1);
  /* The whole window, then a merged block zooms to itself. */
  ASSERT(sa.v0 == 0 && sa.v1 >= span - 1);
  double b0, b1;
  const char *blk = strstr(log, "\nblock ");
  ASSERT_NOT_NULL(blk);
  ASSERT_EQ(sscanf(blk + 7, "%lf %lf", &b0, &b1), 2);
  ASSERT(sz.v0 <= b0 && sz.v1 >= b1);
  ASSERT(sz.v1 - sz.v0 < (b1 - b0) * 1.5 + 100);
  gp_tp_close(tp);
  free(d);
}
