/*
 * gl_hud_app.c - a GL program that draws the same scene every frame and,
 * when asked, the HUD over it with the renderer of the GL library
 * (src/backend/opengl/hud_gl.c, linked in), for the tests that compare
 * screenshots of Xvfb with and without the HUD and the benchmark.
 *
 *   gl_hud_app [--api compat|core|es|es2] [--as MAJOR.MINOR]
 *              [--hud none|fixed|full|live] [--state] [--frames N]
 *              [--size WxH] [--ready FILE] [--hold FILE]
 *              [--bench ROUNDS] [--sim-first]
 *
 * --hud fixed draws a view built here (two panes: fps and frametime, then
 * gpu-frametime, with fixed values and histories); --hud full the
 * largest view there can be, every kind of value in it; --hud live draws
 * what
 * the process's HUD (GPUPERF_HUD) shows, feeding it each swap through the
 * backend table, as libgpuperf-gl.so does, with the times it reads
 * itself after each swap; it prints the shortest and the longest interval
 * between two swaps, and the time of the last swap on the HUD's clock
 * (seconds since GPUPERF_HUD_T0). --sim-first: before its first frame, the
 * program uses a simulated GPU (a device: the HUD starts showing on the
 * terminal) and waits 2 s. --as tells the renderer the
 * context is of that version (an older one than it is: its GL 2 / ES 2
 * paths). --state sets, after the scene and before the HUD, a state far
 * from GL's defaults (another program, vertex arrays, buffers, textures
 * on two units, a sampler, framebuffers bound for drawing and reading,
 * viewport, scissor, blending, depth, stencil, culling, colour mask,
 * polygon mode, logic op, rasterizer discard, pixel unpack state, current
 * attribute values), reads every piece back with glGet before and after
 * the renderer ran, and counts what differs and any GL error raised.
 * After N frames (default 30) it prints its counts, creates the --ready
 * file and waits for the --hold file (at most 60 s) before exiting, so a
 * test can take a screenshot of the last frame. --bench ROUNDS: rounds
 * of 200 frames without and 200 with the HUD (the order alternating),
 * printing each mode's frame rate, median [min..max], the median of
 * the rounds' ratios and of the HUD's cost per frame (the difference of
 * the frame times). Exit status 0; 3 when state differed or a GL error
 * was raised; 2 on a usage error; 1 when GL is not there.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <GL/glcorearb.h>

#include "backend/opengl/hud_gl.h"
#include "core/backend.h"
#include "gpuperf/gpuperf.h"
#include "programs/gl_win.h"

#define GL_CURRENT_VERTEX_ATTRIB_ 0x8626

#define FUNCS(X)                                                               \
  X(GETINTEGERV, GetIntegerv)                                                  \
  X(GETBOOLEANV, GetBooleanv)                                                  \
  X(GETFLOATV, GetFloatv)                                                      \
  X(GETERROR, GetError)                                                        \
  X(ISENABLED, IsEnabled)                                                      \
  X(ENABLE, Enable)                                                            \
  X(DISABLE, Disable)                                                          \
  X(VIEWPORT, Viewport)                                                        \
  X(SCISSOR, Scissor)                                                          \
  X(CLEARCOLOR, ClearColor)                                                    \
  X(CLEAR, Clear)                                                              \
  X(COLORMASK, ColorMask)                                                      \
  X(BLENDFUNCSEPARATE, BlendFuncSeparate)                                      \
  X(BLENDEQUATIONSEPARATE, BlendEquationSeparate)                              \
  X(DEPTHFUNC, DepthFunc)                                                      \
  X(CULLFACE, CullFace)                                                        \
  X(FRONTFACE, FrontFace)                                                      \
  X(ACTIVETEXTURE, ActiveTexture)                                              \
  X(GENTEXTURES, GenTextures)                                                  \
  X(BINDTEXTURE, BindTexture)                                                  \
  X(PIXELSTOREI, PixelStorei)                                                  \
  X(GENBUFFERS, GenBuffers)                                                    \
  X(BINDBUFFER, BindBuffer)                                                    \
  X(BUFFERDATA, BufferData)                                                    \
  X(CREATESHADER, CreateShader)                                                \
  X(SHADERSOURCE, ShaderSource)                                                \
  X(COMPILESHADER, CompileShader)                                              \
  X(GETSHADERIV, GetShaderiv)                                                  \
  X(CREATEPROGRAM, CreateProgram)                                              \
  X(ATTACHSHADER, AttachShader)                                                \
  X(BINDATTRIBLOCATION, BindAttribLocation)                                    \
  X(LINKPROGRAM, LinkProgram)                                                  \
  X(GETPROGRAMIV, GetProgramiv)                                                \
  X(USEPROGRAM, UseProgram)                                                    \
  X(ENABLEVERTEXATTRIBARRAY, EnableVertexAttribArray)                          \
  X(DISABLEVERTEXATTRIBARRAY, DisableVertexAttribArray)                        \
  X(VERTEXATTRIBPOINTER, VertexAttribPointer)                                  \
  X(GETVERTEXATTRIBIV, GetVertexAttribiv)                                      \
  X(GETVERTEXATTRIBFV, GetVertexAttribfv)                                      \
  X(VERTEXATTRIB4F, VertexAttrib4f)                                            \
  X(DRAWARRAYS, DrawArrays)                                                    \
  X(GENFRAMEBUFFERS, GenFramebuffers)                                          \
  X(BINDFRAMEBUFFER, BindFramebuffer)                                          \
  X(FRAMEBUFFERTEXTURE2D, FramebufferTexture2D)                                \
  X(TEXIMAGE2D, TexImage2D)                                                    \
  X(FINISH, Finish)
#define FUNCS3(X)                                                              \
  X(GENVERTEXARRAYS, GenVertexArrays)                                          \
  X(BINDVERTEXARRAY, BindVertexArray)                                          \
  X(GENSAMPLERS, GenSamplers)                                                  \
  X(BINDSAMPLER, BindSampler)
#define FUNCSD(X)                                                              \
  X(POLYGONMODE, PolygonMode)                                                  \
  X(LOGICOP, LogicOp)                                                          \
  X(DRAWBUFFER, DrawBuffer)

static struct {
#define DECL(T, N) PFNGL##T##PROC N;
  FUNCS(DECL) FUNCS3(DECL) FUNCSD(DECL)
#undef DECL
} gl;

static bool es, three; /* an ES context; GL 3 / ES 3 or later */
static int width = 320, height = 240;
static GLuint scene_prog, scene_vbo, scene_vao;
static GLuint other_prog, other_vao, other_vbo, other_ebo, tex0, tex3, sampler,
    fbo_draw, fbo_read;

static void die(const char *what) {
  fprintf(stderr, "gl_hud_app: %s\n", what);
  exit(1);
}

static GLuint program(const char *vs, const char *fs) {
  char pre[128];
  snprintf(pre, sizeof(pre), "%s",
           es      ? (three ? "#version 300 es\nprecision mediump float;\n"
                            : "#version 100\nprecision mediump float;\n")
           : three ? "#version 150\n"
                   : "#version 110\n");
  bool modern = three;
  char v[1024], f[1024];
  snprintf(v, sizeof(v), "%s#define IN %s\n#define OUT %s\n%s", pre,
           modern ? "in" : "attribute", modern ? "out" : "varying", vs);
  snprintf(f, sizeof(f), "%s#define IN %s\n%s%s", pre,
           modern ? "in" : "varying",
           modern ? "out vec4 o;\n" : "#define o gl_FragColor\n", fs);
  GLuint p = gl.CreateProgram();
  const char *src[2] = {v, f};
  GLenum types[2] = {GL_VERTEX_SHADER, GL_FRAGMENT_SHADER};
  for (int i = 0; i < 2; i++) {
    GLuint s = gl.CreateShader(types[i]);
    GLint ok = 0;
    gl.ShaderSource(s, 1, &src[i], NULL);
    gl.CompileShader(s);
    gl.GetShaderiv(s, GL_COMPILE_STATUS, &ok);
    if (!ok)
      die("a scene shader does not compile");
    gl.AttachShader(p, s);
  }
  gl.BindAttribLocation(p, 0, "pos");
  gl.BindAttribLocation(p, 1, "col");
  gl.LinkProgram(p);
  GLint ok = 0;
  gl.GetProgramiv(p, GL_LINK_STATUS, &ok);
  if (!ok)
    die("a scene program does not link");
  return p;
}

/* The scene: triangles over the whole window, the HUD's corner included
 * (so the HUD blends over them), in colours of their own. */
static void scene_init(void) {
  scene_prog = program("IN vec2 pos; IN vec3 col; OUT vec3 c;\n"
                       "void main() { c = col; gl_Position = vec4(pos, 0.0, "
                       "1.0); }\n",
                       "IN vec3 c; void main() { o = vec4(c, 1.0); }\n");
  static const float tri[] = {
      /* x, y, r, g, b: four triangles */
      -1.0f,  1.0f,   0.9f, 0.2f, 0.1f, 0.2f,   1.0f,  0.1f, 0.8f, 0.3f,
      -1.0f,  -0.3f,  0.2f, 0.3f, 0.9f, 0.8f,   -0.9f, 0.9f, 0.9f, 0.2f,
      -0.2f,  0.9f,   0.2f, 0.9f, 0.9f, 0.9f,   -0.1f, 0.7f, 0.1f, 0.7f,
      -0.9f,  -0.9f,  0.5f, 0.5f, 0.5f, -0.95f, 0.95f, 1.0f, 1.0f, 1.0f,
      0.95f,  -0.95f, 0.0f, 0.0f, 0.0f, -0.5f,  0.98f, 0.3f, 0.6f, 0.9f,
      -0.45f, 0.2f,   0.8f, 0.8f, 0.1f, -0.98f, 0.5f,  0.1f, 0.1f, 0.6f};
  gl.GenBuffers(1, &scene_vbo);
  if (three) {
    gl.GenVertexArrays(1, &scene_vao);
    gl.BindVertexArray(scene_vao);
  }
  gl.BindBuffer(GL_ARRAY_BUFFER, scene_vbo);
  gl.BufferData(GL_ARRAY_BUFFER, sizeof(tri), tri, GL_STATIC_DRAW);
}

static void scene_draw(void) {
  gl.BindFramebuffer(GL_FRAMEBUFFER, 0);
  gl.Viewport(0, 0, width, height);
  GLenum off[] = {GL_BLEND,     GL_DEPTH_TEST,   GL_STENCIL_TEST,
                  GL_CULL_FACE, GL_SCISSOR_TEST, GL_SAMPLE_ALPHA_TO_COVERAGE};
  for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++)
    gl.Disable(off[i]);
  if (three)
    gl.Disable(GL_RASTERIZER_DISCARD);
  if (!es) {
    gl.Disable(GL_COLOR_LOGIC_OP);
    gl.PolygonMode(GL_FRONT_AND_BACK, GL_FILL);
    gl.DrawBuffer(GL_BACK);
  }
  gl.ColorMask(GL_TRUE, GL_TRUE, GL_TRUE, GL_TRUE);
  gl.ClearColor(0.15f, 0.25f, 0.35f, 1.0f);
  gl.Clear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT | GL_STENCIL_BUFFER_BIT);
  gl.UseProgram(scene_prog);
  if (three)
    gl.BindVertexArray(scene_vao);
  gl.BindBuffer(GL_ARRAY_BUFFER, scene_vbo);
  gl.VertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 20, (void *)0);
  gl.VertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, 20, (void *)8);
  gl.EnableVertexAttribArray(0);
  gl.EnableVertexAttribArray(1);
  gl.DrawArrays(GL_TRIANGLES, 0, 12);
  gl.DisableVertexAttribArray(0);
  gl.DisableVertexAttribArray(1);
}

/* ------------------------------------------------------------------ */
/* The program's state around the HUD                                   */

/* A state far from the defaults, as a program may leave it at a swap. */
static void state_init(void) {
  other_prog = program("IN vec2 pos; void main() { gl_Position = vec4(pos, "
                       "0.0, 1.0); }\n",
                       "void main() { o = vec4(1.0); }\n");
  gl.GenBuffers(1, &other_vbo);
  gl.GenBuffers(1, &other_ebo);
  if (three) {
    gl.GenVertexArrays(1, &other_vao);
    gl.GenSamplers(1, &sampler);
  }
  GLuint t[2];
  gl.GenTextures(2, t);
  tex0 = t[0], tex3 = t[1];
  gl.BindTexture(GL_TEXTURE_2D, tex0);
  gl.TexImage2D(GL_TEXTURE_2D, 0, GL_RGBA, 4, 4, 0, GL_RGBA, GL_UNSIGNED_BYTE,
                NULL);
  GLuint f[2];
  gl.GenFramebuffers(2, f);
  fbo_draw = f[0], fbo_read = f[1];
  for (int i = 0; i < 2; i++) {
    gl.BindFramebuffer(GL_FRAMEBUFFER, f[i]);
    gl.FramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D,
                            tex0, 0);
  }
  gl.BindFramebuffer(GL_FRAMEBUFFER, 0);
}

static void state_set(void) {
  gl.UseProgram(other_prog);
  if (three)
    gl.BindVertexArray(other_vao);
  gl.BindBuffer(GL_ELEMENT_ARRAY_BUFFER, other_ebo);
  gl.BindBuffer(GL_ARRAY_BUFFER, other_vbo);
  gl.VertexAttribPointer(0, 3, GL_FLOAT, GL_TRUE, 24, (void *)16);
  gl.EnableVertexAttribArray(0);
  gl.BindBuffer(GL_ARRAY_BUFFER, scene_vbo);
  gl.VertexAttribPointer(2, 4, GL_UNSIGNED_BYTE, GL_TRUE, 8, (void *)4);
  gl.BindBuffer(GL_ARRAY_BUFFER, other_vbo); /* another than attribute 2's */
  gl.VertexAttrib4f(1, 0.25f, 0.5f, 0.75f, 1.5f);
  gl.VertexAttrib4f(2, -1.0f, 2.0f, -3.0f, 4.0f);
  gl.ActiveTexture(GL_TEXTURE0);
  gl.BindTexture(GL_TEXTURE_2D, tex0);
  if (three)
    gl.BindSampler(0, sampler);
  gl.ActiveTexture(GL_TEXTURE3);
  gl.BindTexture(GL_TEXTURE_2D, tex3);
  if (three) {
    gl.BindFramebuffer(GL_DRAW_FRAMEBUFFER, fbo_draw);
    gl.BindFramebuffer(GL_READ_FRAMEBUFFER, fbo_read);
    gl.Enable(GL_RASTERIZER_DISCARD);
    gl.PixelStorei(GL_UNPACK_ROW_LENGTH, 7);
    gl.PixelStorei(GL_UNPACK_SKIP_ROWS, 2);
    gl.BindBuffer(GL_PIXEL_UNPACK_BUFFER, other_ebo);
  } else {
    gl.BindFramebuffer(GL_FRAMEBUFFER, fbo_draw);
  }
  gl.PixelStorei(GL_UNPACK_ALIGNMENT, 1);
  gl.Viewport(5, 6, 100, 50);
  gl.Scissor(1, 2, 3, 4);
  gl.Enable(GL_SCISSOR_TEST);
  gl.Enable(GL_BLEND);
  gl.BlendFuncSeparate(GL_ONE, GL_ZERO, GL_DST_COLOR, GL_SRC_ALPHA);
  gl.BlendEquationSeparate(GL_FUNC_SUBTRACT, GL_FUNC_REVERSE_SUBTRACT);
  gl.Enable(GL_DEPTH_TEST);
  gl.DepthFunc(GL_GREATER);
  gl.Enable(GL_STENCIL_TEST);
  gl.Enable(GL_CULL_FACE);
  gl.CullFace(GL_FRONT_AND_BACK);
  gl.FrontFace(GL_CW);
  gl.Enable(GL_SAMPLE_ALPHA_TO_COVERAGE);
  gl.ColorMask(GL_TRUE, GL_FALSE, GL_TRUE, GL_FALSE);
  if (!es) {
    gl.PolygonMode(GL_FRONT_AND_BACK, GL_LINE);
    gl.Enable(GL_COLOR_LOGIC_OP);
    gl.LogicOp(GL_XOR);
  }
}

/* What is read back: glGetIntegerv / glGetBooleanv of a name, or
 * glIsEnabled, or an attribute's array state or current value. */
enum { Q_INT, Q_BOOL, Q_ENABLED, Q_ATTRIB, Q_CURRENT, Q_TEX_UNIT };
typedef struct query {
  const char *name;
  int kind;
  GLenum pname;
  int count; /* values; for Q_ATTRIB / Q_CURRENT / Q_TEX_UNIT the index */
  int when;  /* 0 always, 3: GL 3 / ES 3, 'd': desktop GL */
} query;

#define Q(kind, pname, count, when)                                            \
  { #pname, kind, pname, count, when }
static const query queries[] = {
    Q(Q_INT, GL_CURRENT_PROGRAM, 1, 0),
    Q(Q_INT, GL_ARRAY_BUFFER_BINDING, 1, 0),
    Q(Q_INT, GL_ELEMENT_ARRAY_BUFFER_BINDING, 1, 0),
    Q(Q_INT, GL_VERTEX_ARRAY_BINDING, 1, 3),
    Q(Q_INT, GL_ACTIVE_TEXTURE, 1, 0),
    Q(Q_TEX_UNIT, GL_TEXTURE_BINDING_2D, 0, 0),
    Q(Q_TEX_UNIT, GL_TEXTURE_BINDING_2D, 3, 0),
    Q(Q_TEX_UNIT, GL_SAMPLER_BINDING, 0, 3),
    Q(Q_INT, GL_DRAW_FRAMEBUFFER_BINDING, 1, 0),
    Q(Q_INT, GL_READ_FRAMEBUFFER_BINDING, 1, 3),
    Q(Q_INT, GL_VIEWPORT, 4, 0),
    Q(Q_INT, GL_SCISSOR_BOX, 4, 0),
    Q(Q_ENABLED, GL_SCISSOR_TEST, 1, 0),
    Q(Q_ENABLED, GL_BLEND, 1, 0),
    Q(Q_INT, GL_BLEND_SRC_RGB, 1, 0),
    Q(Q_INT, GL_BLEND_DST_RGB, 1, 0),
    Q(Q_INT, GL_BLEND_SRC_ALPHA, 1, 0),
    Q(Q_INT, GL_BLEND_DST_ALPHA, 1, 0),
    Q(Q_INT, GL_BLEND_EQUATION_RGB, 1, 0),
    Q(Q_INT, GL_BLEND_EQUATION_ALPHA, 1, 0),
    Q(Q_ENABLED, GL_DEPTH_TEST, 1, 0),
    Q(Q_INT, GL_DEPTH_FUNC, 1, 0),
    Q(Q_ENABLED, GL_STENCIL_TEST, 1, 0),
    Q(Q_ENABLED, GL_CULL_FACE, 1, 0),
    Q(Q_INT, GL_CULL_FACE_MODE, 1, 0),
    Q(Q_INT, GL_FRONT_FACE, 1, 0),
    Q(Q_ENABLED, GL_SAMPLE_ALPHA_TO_COVERAGE, 1, 0),
    Q(Q_BOOL, GL_COLOR_WRITEMASK, 4, 0),
    Q(Q_ENABLED, GL_RASTERIZER_DISCARD, 1, 3),
    Q(Q_INT, GL_UNPACK_ALIGNMENT, 1, 0),
    Q(Q_INT, GL_UNPACK_ROW_LENGTH, 1, 3),
    Q(Q_INT, GL_UNPACK_SKIP_ROWS, 1, 3),
    Q(Q_INT, GL_PIXEL_UNPACK_BUFFER_BINDING, 1, 3),
    Q(Q_INT, GL_POLYGON_MODE, 2, 'd'),
    Q(Q_ENABLED, GL_COLOR_LOGIC_OP, 1, 'd'),
    Q(Q_INT, GL_LOGIC_OP_MODE, 1, 'd'),
    Q(Q_INT, GL_DRAW_BUFFER, 1, 'd'),
    Q(Q_ENABLED, GL_FRAMEBUFFER_SRGB, 1, 'd'),
    Q(Q_ATTRIB, GL_VERTEX_ATTRIB_ARRAY_ENABLED, 0, 0),
    Q(Q_ATTRIB, GL_VERTEX_ATTRIB_ARRAY_ENABLED, 1, 0),
    Q(Q_ATTRIB, GL_VERTEX_ATTRIB_ARRAY_ENABLED, 2, 0),
    Q(Q_ATTRIB, GL_VERTEX_ATTRIB_ARRAY_SIZE, 0, 0),
    Q(Q_ATTRIB, GL_VERTEX_ATTRIB_ARRAY_SIZE, 2, 0),
    Q(Q_ATTRIB, GL_VERTEX_ATTRIB_ARRAY_TYPE, 0, 0),
    Q(Q_ATTRIB, GL_VERTEX_ATTRIB_ARRAY_TYPE, 2, 0),
    Q(Q_ATTRIB, GL_VERTEX_ATTRIB_ARRAY_NORMALIZED, 0, 0),
    Q(Q_ATTRIB, GL_VERTEX_ATTRIB_ARRAY_STRIDE, 0, 0),
    Q(Q_ATTRIB, GL_VERTEX_ATTRIB_ARRAY_STRIDE, 2, 0),
    Q(Q_ATTRIB, GL_VERTEX_ATTRIB_ARRAY_BUFFER_BINDING, 0, 0),
    Q(Q_ATTRIB, GL_VERTEX_ATTRIB_ARRAY_BUFFER_BINDING, 2, 0),
    Q(Q_CURRENT, GL_CURRENT_VERTEX_ATTRIB_, 1, 0),
    Q(Q_CURRENT, GL_CURRENT_VERTEX_ATTRIB_, 2, 0),
};
#define NQ (sizeof(queries) / sizeof(queries[0]))

/* Reads every query that applies into v (4 values each); the active
 * texture unit is put back after the units' bindings are read. */
static void state_read(double v[NQ][4]) {
  GLint active = 0;
  gl.GetIntegerv(GL_ACTIVE_TEXTURE, &active);
  for (size_t i = 0; i < NQ; i++) {
    const query *q = &queries[i];
    GLint iv[4] = {0, 0, 0, 0};
    GLboolean bv[4] = {0, 0, 0, 0};
    GLfloat fv[4] = {0, 0, 0, 0};
    v[i][0] = v[i][1] = v[i][2] = v[i][3] = 0;
    if ((q->when == 3 && !three) || (q->when == 'd' && es))
      continue;
    switch (q->kind) {
    case Q_INT:
      gl.GetIntegerv(q->pname, iv);
      for (int k = 0; k < q->count; k++)
        v[i][k] = iv[k];
      break;
    case Q_BOOL:
      gl.GetBooleanv(q->pname, bv);
      for (int k = 0; k < q->count; k++)
        v[i][k] = bv[k];
      break;
    case Q_ENABLED:
      v[i][0] = gl.IsEnabled(q->pname);
      break;
    case Q_ATTRIB:
      gl.GetVertexAttribiv((GLuint)q->count, q->pname, iv);
      v[i][0] = iv[0];
      break;
    case Q_CURRENT:
      gl.GetVertexAttribfv((GLuint)q->count, q->pname, fv);
      for (int k = 0; k < 4; k++)
        v[i][k] = fv[k];
      break;
    case Q_TEX_UNIT:
      gl.ActiveTexture(GL_TEXTURE0 + (GLenum)q->count);
      gl.GetIntegerv(q->pname, iv);
      v[i][0] = iv[0];
      break;
    }
  }
  gl.ActiveTexture((GLenum)active);
}

/* Compares two readings; prints what differs. Returns the count. */
static int state_diff(double a[NQ][4], double b[NQ][4], const char *when) {
  int n = 0;
  for (size_t i = 0; i < NQ; i++)
    for (int k = 0; k < 4; k++)
      if (a[i][k] != b[i][k]) {
        fprintf(stderr, "gl_hud_app: %s: %s[%d] (#%d) was %g, is %g\n", when,
                queries[i].name, k, queries[i].count, a[i][k], b[i][k]);
        n++;
      }
  return n;
}

/* ------------------------------------------------------------------ */
/* The views                                                            */

static gp_hud_view view;

/* Two panes with fixed values and histories. */
static void fixed_view(void) {
  static const char *names[] = {"fps", "frametime", "gpu-frametime"};
  static const double values[] = {59.94, 16.68, 3.25};
  memset(&view, 0, sizeof(view));
  view.size = sizeof(view);
  view.num_items = 3;
  view.num_panes = 2;
  view.seq = 1;
  for (int i = 0; i < 3; i++) {
    gp_hud_view_item *it = &view.items[i];
    snprintf(it->name, sizeof(it->name), "%s", names[i]);
    it->pane = i < 2 ? 0 : 1;
    it->flags = GP_HUD_VIEW_HAVE;
    it->value = values[i];
    it->num_hist = GP_HUD_VIEW_HIST;
    it->top = 0;
    for (int k = 0; k < GP_HUD_VIEW_HIST; k++) {
      it->hist[k] = values[i] * (1.0 + 0.5 * sin(k * 0.3 + i));
      it->top = it->hist[k] > it->top ? it->hist[k] : it->top;
    }
  }
}

/* The largest view: GP_HUD_VIEW_MAX_ITEMS items in panes of 4, 4, 4, 2
 * and 2, names as long as they can be, values of every kind (huge,
 * negative, not a number, none yet, above the top of the scale), full
 * histories. */
static void full_view(void) {
  static const int panes[GP_HUD_VIEW_MAX_ITEMS] = {0, 0, 0, 0, 1, 1, 1, 1,
                                                   2, 2, 2, 2, 3, 3, 4, 4};
  memset(&view, 0, sizeof(view));
  view.size = sizeof(view);
  view.num_items = GP_HUD_VIEW_MAX_ITEMS;
  view.num_panes = 5;
  view.seq = 7;
  for (int i = 0; i < GP_HUD_VIEW_MAX_ITEMS; i++) {
    gp_hud_view_item *it = &view.items[i];
    memset(it->name, 'a' + i, sizeof(it->name) - 1);
    it->pane = (uint32_t)panes[i];
    it->flags = i % 5 == 4 ? 0 : GP_HUD_VIEW_HAVE;
    it->value = i % 3 == 0 ? -1.234e300 : i % 3 == 1 ? NAN : 123456789.0;
    it->top = i % 2 ? 1.0 : 1e-300;
    it->num_hist = GP_HUD_VIEW_HIST;
    for (int k = 0; k < GP_HUD_VIEW_HIST; k++)
      it->hist[k] = k % 7 == 3 ? NAN : k % 2 ? 1e300 : -1e300;
  }
}

static uint64_t mono_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof(double), cmp);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ------------------------------------------------------------------ */

static void usage(void) {
  fprintf(stderr,
          "usage: gl_hud_app [--api compat|core|es|es2] [--as MAJOR.MINOR] "
          "[--hud none|fixed|full|live] [--state] [--frames N] [--size WxH] "
          "[--ready FILE] [--hold FILE] [--bench ROUNDS]\n");
  exit(2);
}

int main(int argc, char **argv) {
  gl_win_api api = GL_WIN_COMPAT;
  const char *hud = "none", *ready = NULL, *hold = NULL;
  int frames = 30, as_major = 0, as_minor = 0, bench = 0;
  bool state = false, sim_first = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--state") == 0 || strcmp(a, "--sim-first") == 0) {
      if (strcmp(a, "--state") == 0)
        state = true;
      else
        sim_first = true;
      continue;
    }
    if (!v)
      usage();
    i++;
    if (strcmp(a, "--api") == 0)
      api = strcmp(v, "core") == 0  ? GL_WIN_CORE
            : strcmp(v, "es") == 0  ? GL_WIN_ES
            : strcmp(v, "es2") == 0 ? GL_WIN_ES2
                                    : GL_WIN_COMPAT;
    else if (strcmp(a, "--as") == 0)
      sscanf(v, "%d.%d", &as_major, &as_minor);
    else if (strcmp(a, "--hud") == 0)
      hud = v;
    else if (strcmp(a, "--frames") == 0)
      frames = atoi(v);
    else if (strcmp(a, "--size") == 0)
      sscanf(v, "%dx%d", &width, &height);
    else if (strcmp(a, "--ready") == 0)
      ready = v;
    else if (strcmp(a, "--hold") == 0)
      hold = v;
    else if (strcmp(a, "--bench") == 0)
      bench = atoi(v);
    else
      usage();
  }
  bool live = strcmp(hud, "live") == 0, full = strcmp(hud, "full") == 0;
  bool fixed = full || strcmp(hud, "fixed") == 0;
  if (!live && !fixed && strcmp(hud, "none") != 0)
    usage();
  if (!gl_win_open(api, width, height))
    return 1;
  bool ok = true;
#define LOAD(T, N)                                                             \
  gl.N = (PFNGL##T##PROC)gl_win_proc("gl" #N);                                 \
  ok = ok && gl.N;
  FUNCS(LOAD)
#undef LOAD
  int major, minor;
  gl_win_version(&major, &minor);
  es = api == GL_WIN_ES || api == GL_WIN_ES2;
  if (as_major) { /* a program of that version: none of GL 3's objects */
    major = as_major;
    minor = as_minor;
  }
  three = major >= 3;
#define LOAD_IF(T, N)                                                          \
  gl.N = (PFNGL##T##PROC)gl_win_proc("gl" #N);                                 \
  ok = ok && gl.N;
  if (three) {
    FUNCS3(LOAD_IF)
  }
  if (!es) {
    FUNCSD(LOAD_IF)
  }
  if (!ok)
    die("a GL function is missing");
  printf("gl_hud_app: %s %d.%d\n", es ? "OpenGL ES" : "OpenGL", major, minor);
  scene_init();
  if (state)
    state_init();
  const gp_backend_ops *ops = NULL;
  if (live) {
    ops = gp_backend_interface(GP_BACKEND_INTERFACE_VERSION, sizeof(*ops));
    if (!ops)
      die("libgpuperf gives no backend table");
    view.size = sizeof(view);
  } else {
    if (full)
      full_view();
    else
      fixed_view();
  }
  gp__gl_hud *h = NULL;
  int differ = 0, errors = 0, checks = 0;
  double before[NQ][4], after[NQ][4];
  if (bench)
    frames = 0;
  if (sim_first) {
    gp_sim_context *ctx = NULL;
    if (gp_sim_context_create(0, &ctx) != 0)
      die("no simulated GPU");
    usleep(2000000);
    gp_sim_context_destroy(ctx);
  }
  uint64_t last = 0, shortest = UINT64_MAX, longest = 0;
  for (int f = 0; f < frames; f++) {
    scene_draw();
    if (state) {
      state_set();
      while (gl.GetError() != GL_NO_ERROR)
        errors += 1000; /* the program's own: a bug of this test */
      state_read(before);
    }
    if (!h && (live || fixed)) {
      h = gp__gl_hud_create(gl_win_proc, es, major, minor);
      if (!h)
        die("gp__gl_hud_create failed");
    }
    bool draw = fixed || (live && ops->hud_view(&view) == 0);
    if (draw)
      gp__gl_hud_draw(h, &view, width, height);
    if (state) {
      state_read(after);
      differ += state_diff(before, after, "after the HUD");
      checks++;
      GLenum e;
      while ((e = gl.GetError()) != GL_NO_ERROR) {
        fprintf(stderr, "gl_hud_app: GL error 0x%x after the HUD\n", e);
        errors++;
      }
    }
    gl_win_swap();
    if (live) {
      uint64_t t = mono_ns();
      ops->hud_feed(GP_HUD_FEED_SWAP, t, 0);
      if (last) {
        shortest = t - last < shortest ? t - last : shortest;
        longest = t - last > longest ? t - last : longest;
      }
      last = t;
    }
  }
  if (live && longest)
    printf("gl_hud_app: intervals between swaps: shortest %.9g ms, longest "
           "%.9g ms\n",
           (double)shortest / 1e6, (double)longest / 1e6);
  /* The HUD's rows are timed from GPUPERF_HUD_T0 (CLOCK_MONOTONIC ns). */
  const char *hud_t0 = getenv("GPUPERF_HUD_T0");
  if (live && last && hud_t0)
    printf("gl_hud_app: last swap at %.6f s\n",
           (double)(last - strtoull(hud_t0, NULL, 10)) / 1e9);
  if (bench) {
    /* Rounds of frames without and with the HUD, the order alternating. */
    enum { BLOCK = 200 };
    double fps[2][64], ratio[64], cost[64];
    if (!h)
      h = gp__gl_hud_create(gl_win_proc, es, major, minor);
    bench = bench > 64 ? 64 : bench;
    for (int r = 0; r < bench; r++) {
      for (int k = 0; k < 2; k++) {
        int with = (r + k) % 2;
        uint64_t t0 = mono_ns();
        for (int f = 0; f < BLOCK; f++) {
          scene_draw();
          if (with)
            gp__gl_hud_draw(h, &view, width, height);
          gl_win_swap();
        }
        gl.Finish();
        fps[with][r] = BLOCK * 1e9 / (double)(mono_ns() - t0);
      }
      ratio[r] = fps[1][r] / fps[0][r];
      cost[r] = (1 / fps[1][r] - 1 / fps[0][r]) * 1e3;
    }
    double lo[2], hi[2], med[2];
    for (int m = 0; m < 2; m++) {
      lo[m] = hi[m] = fps[m][0];
      for (int r = 0; r < bench; r++) {
        lo[m] = fps[m][r] < lo[m] ? fps[m][r] : lo[m];
        hi[m] = fps[m][r] > hi[m] ? fps[m][r] : hi[m];
      }
      med[m] = median(fps[m], bench);
    }
    double rlo = ratio[0], rhi = ratio[0];
    for (int r = 0; r < bench; r++) {
      rlo = ratio[r] < rlo ? ratio[r] : rlo;
      rhi = ratio[r] > rhi ? ratio[r] : rhi;
    }
    printf("gl_hud_app: %dx%d, %d rounds of %d frames each way\n", width,
           height, bench, BLOCK);
    printf("  without the HUD: %.0f fps, median [%.0f..%.0f]\n", med[0], lo[0],
           hi[0]);
    printf("  with the HUD:    %.0f fps, median [%.0f..%.0f]\n", med[1], lo[1],
           hi[1]);
    printf("  ratio with/without: %.3f, median of the rounds' [%.3f..%.3f]\n",
           median(ratio, bench), rlo, rhi);
    double clo = cost[0], chi = cost[0];
    for (int r = 0; r < bench; r++) {
      clo = cost[r] < clo ? cost[r] : clo;
      chi = cost[r] > chi ? cost[r] : chi;
    }
    printf("  the HUD's cost per frame: %.3f ms, median of the rounds' "
           "[%.3f..%.3f]\n",
           median(cost, bench), clo, chi);
  }
  printf("gl_hud_app: frames %d, state checks %d, differ %d, GL errors %d\n",
         frames, checks, differ, errors);
  fflush(stdout);
  if (ready) {
    FILE *rf = fopen(ready, "w");
    if (rf)
      fclose(rf);
  }
  for (int i = 0; hold && i < 3000 && access(hold, F_OK) != 0; i++)
    usleep(20000);
  gp__gl_hud_destroy(h);
  gl_win_close();
  return differ || errors ? 3 : 0;
}
