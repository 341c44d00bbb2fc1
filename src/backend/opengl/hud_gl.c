/*
 * hud_gl.c - the HUD's panes drawn with GL at a swap (hud_gl.h).
 *
 * One program, one vertex buffer, one font texture per context, made at
 * create. Everything is drawn as textured triangles in one draw call: the
 * panes' backgrounds and graph frames and the graphs' segments sample a
 * solid texel of the font texture, the text its glyphs; the texture's
 * alpha times the vertex colour is blended over the frame. Vertices are
 * window pixels (top left origin), made on the CPU into a buffer
 * allocated once, and uploaded only when the view changed (the HUD's
 * values change once a period, not every frame).
 *
 * The font is a 5x7 bitmap of printable ASCII drawn for gpuperf, put into a
 * 128x64 RGBA texture of 8x8 cells; the cell of code 127 is solid.
 *
 * GL state. The renderer runs inside the program's frame, so it reads
 * every piece of state it is about to change and puts it back after its
 * draw: see save() and restore(). What exists depends on the context:
 * vertex array objects, separate draw and read framebuffers, sampler
 * objects, the unpack row state and pixel buffers on GL 3 / ES 3; polygon
 * mode, the draw buffer, sRGB writes and logic ops on desktop GL only;
 * alpha test in a compatibility context; the clip origin on GL 4.5. With
 * no vertex array object (GL 2, ES 2) the program's attribute arrays 0 to
 * 2 are used, so their whole array state and the current values of 1 and
 * 2 are saved too. Not handled: a transform feedback or a query left
 * active across the swap would see the HUD's triangles.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <GL/glcorearb.h>

#include "hud_gl.h"

/* Compatibility-profile and ES-only names that glcorearb.h lacks. */
#define GL_ALPHA_TEST 0x0BC0
#define GL_CURRENT_VERTEX_ATTRIB_ 0x8626

/* The GL functions the renderer calls: type suffix, name. */
#define GL_FUNCS(X)                                                            \
  X(GETINTEGERV, GetIntegerv)                                                  \
  X(GETFLOATV, GetFloatv)                                                      \
  X(GETBOOLEANV, GetBooleanv)                                                  \
  X(GETSTRING, GetString)                                                      \
  X(ISENABLED, IsEnabled)                                                      \
  X(ENABLE, Enable)                                                            \
  X(DISABLE, Disable)                                                          \
  X(VIEWPORT, Viewport)                                                        \
  X(COLORMASK, ColorMask)                                                      \
  X(BLENDFUNCSEPARATE, BlendFuncSeparate)                                      \
  X(BLENDEQUATIONSEPARATE, BlendEquationSeparate)                              \
  X(ACTIVETEXTURE, ActiveTexture)                                              \
  X(BINDTEXTURE, BindTexture)                                                  \
  X(GENTEXTURES, GenTextures)                                                  \
  X(DELETETEXTURES, DeleteTextures)                                            \
  X(TEXIMAGE2D, TexImage2D)                                                    \
  X(TEXPARAMETERI, TexParameteri)                                              \
  X(PIXELSTOREI, PixelStorei)                                                  \
  X(DRAWARRAYS, DrawArrays)                                                    \
  X(GENBUFFERS, GenBuffers)                                                    \
  X(DELETEBUFFERS, DeleteBuffers)                                              \
  X(BINDBUFFER, BindBuffer)                                                    \
  X(BUFFERDATA, BufferData)                                                    \
  X(BUFFERSUBDATA, BufferSubData)                                              \
  X(CREATESHADER, CreateShader)                                                \
  X(SHADERSOURCE, ShaderSource)                                                \
  X(COMPILESHADER, CompileShader)                                              \
  X(GETSHADERIV, GetShaderiv)                                                  \
  X(GETSHADERINFOLOG, GetShaderInfoLog)                                        \
  X(DELETESHADER, DeleteShader)                                                \
  X(CREATEPROGRAM, CreateProgram)                                              \
  X(ATTACHSHADER, AttachShader)                                                \
  X(BINDATTRIBLOCATION, BindAttribLocation)                                    \
  X(LINKPROGRAM, LinkProgram)                                                  \
  X(GETPROGRAMIV, GetProgramiv)                                                \
  X(GETPROGRAMINFOLOG, GetProgramInfoLog)                                      \
  X(DELETEPROGRAM, DeleteProgram)                                              \
  X(USEPROGRAM, UseProgram)                                                    \
  X(GETUNIFORMLOCATION, GetUniformLocation)                                    \
  X(UNIFORM1I, Uniform1i)                                                      \
  X(UNIFORM2F, Uniform2f)                                                      \
  X(ENABLEVERTEXATTRIBARRAY, EnableVertexAttribArray)                          \
  X(DISABLEVERTEXATTRIBARRAY, DisableVertexAttribArray)                        \
  X(VERTEXATTRIBPOINTER, VertexAttribPointer)                                  \
  X(GETVERTEXATTRIBIV, GetVertexAttribiv)                                      \
  X(GETVERTEXATTRIBFV, GetVertexAttribfv)                                      \
  X(GETVERTEXATTRIBPOINTERV, GetVertexAttribPointerv)                          \
  X(VERTEXATTRIB4FV, VertexAttrib4fv)

/* Those of some contexts only (NULL elsewhere). */
#define GL_FUNCS_OPT(X)                                                        \
  X(BINDFRAMEBUFFER, BindFramebuffer)                                          \
  X(GENVERTEXARRAYS, GenVertexArrays)                                          \
  X(BINDVERTEXARRAY, BindVertexArray)                                          \
  X(DELETEVERTEXARRAYS, DeleteVertexArrays)                                    \
  X(BINDSAMPLER, BindSampler)                                                  \
  X(GETSTRINGI, GetStringi)                                                    \
  X(POLYGONMODE, PolygonMode)                                                  \
  X(DRAWBUFFER, DrawBuffer)                                                    \
  X(CLIPCONTROL, ClipControl)

typedef struct vertex {
  float x, y, u, v;
  uint8_t rgba[4];
} vertex;

/* Room for every element of the largest view: per pane a background and
 * a frame of four sides, per item its graph's segments and a line of
 * text as wide as the pane. */
#define LINE_CHARS ((GP_GL_HUD_PANE_W - 2 * GP_GL_HUD_PAD) / 6)
#define MAX_VERTS                                                              \
  (GP_HUD_VIEW_MAX_ITEMS *                                                     \
   (5 * 6 + (GP_HUD_VIEW_HIST - 1) * 6 + LINE_CHARS * 6))

#define FONT_W 128
#define FONT_H 64
#define SOLID 127

struct gp__gl_hud {
#define DECL(T, N) PFNGL##T##PROC N;
  GL_FUNCS(DECL)
  GL_FUNCS_OPT(DECL)
#undef DECL
  bool es, compat, vao, split_fb, fb, samplers, unpack_rows, pbo, desktop,
      discard, clip_control;
  GLuint prog, vbo, vao_id, tex;
  GLint u_scale, u_font;
  uint64_t seq; /* the view the buffer holds */
  int w, h, nverts;
  bool built;
  vertex *verts; /* MAX_VERTS */
};

/* 5x7 glyphs of ' ' to '~', one a number: its seven rows of five bits,
 * the top row in bits 34..30, the bottom one in bits 4..0; in a row, the
 * highest bit is the leftmost column. */
static const uint64_t font[95] = {
    0x000000000, 0x108421004, 0x294000000, 0x2bea52bea, 0x11f4717c4,
    0x632222263, 0x32544564d, 0x108000000, 0x088842082, 0x208210888,
    0x009575480, 0x0084f9080, 0x000001844, 0x0000f8000, 0x00000018c,
    0x002222200, 0x3a33ae62e, 0x11842108e, 0x3a211111f, 0x7c441062e,
    0x08ca97c42, 0x7e1e0862e, 0x1910f462e, 0x7c2222108, 0x3a317462e,
    0x3a317844c, 0x018c03180, 0x018c03088, 0x088882082, 0x001f07c00,
    0x208208888, 0x3a2111004, 0x3a216d6ae, 0x3a31fc631, 0x7a31f463e,
    0x3a308422e, 0x72518c65c, 0x7e10f421f, 0x7e10f4210, 0x3a30bc62f,
    0x4631fc631, 0x38842108e, 0x1c4210a4c, 0x4654c5251, 0x42108421f,
    0x4775ac631, 0x4639ace31, 0x3a318c62e, 0x7a31f4210, 0x3a318d64d,
    0x7a31f5251, 0x3e107043e, 0x7c8421084, 0x46318c62e, 0x46318c544,
    0x4631ad6aa, 0x462a22a31, 0x462a21084, 0x7c222221f, 0x39084210e,
    0x020820820, 0x38421084e, 0x115100000, 0x00000001f, 0x208000000,
    0x000e0be2f, 0x4216cc63e, 0x000e8422e, 0x042d9c62f, 0x000e8fe0e,
    0x1928e2108, 0x01f18bc2e, 0x4216cc631, 0x100c2108e, 0x080610a4c,
    0x4212a6292, 0x30842108e, 0x001aad631, 0x0016cc631, 0x000e8c62e,
    0x001e8fa10, 0x000d9bc21, 0x0016cc210, 0x000f8383e, 0x211c42126,
    0x00118c66d, 0x00118c544, 0x00118d6aa, 0x001151151, 0x00118bc2e,
    0x001f1111f, 0x088441082, 0x108421084, 0x208411088, 0x0008a8800,
};

/* ------------------------------------------------------------------ */
/* State saved around the HUD's work                                    */

typedef struct saved {
  GLint program, array_buffer, active_texture, texture, vao, sampler;
  GLint draw_fb, read_fb, draw_buffer, unpack_buffer;
  GLint viewport[4], polygon_mode[2], clip_origin, clip_depth;
  GLint blend_src_rgb, blend_dst_rgb, blend_src_a, blend_dst_a;
  GLint blend_eq_rgb, blend_eq_a;
  GLboolean color_mask[4];
  GLboolean blend, depth, stencil, cull, scissor, alpha_test, srgb, logic_op,
      discard, a2c;
  GLint unpack[6]; /* alignment, row length, skip rows, skip pixels, image
                      height, skip images */
  struct {
    GLint enabled, size, type, normalized, stride, buffer;
    void *pointer;
    GLfloat current[4];
  } attrib[3];
} saved;

/* Reads what the HUD is about to change. */
static void save(const gp__gl_hud *h, saved *s, bool upload) {
  h->GetIntegerv(GL_CURRENT_PROGRAM, &s->program);
  h->GetIntegerv(GL_ARRAY_BUFFER_BINDING, &s->array_buffer);
  h->GetIntegerv(GL_ACTIVE_TEXTURE, &s->active_texture);
  h->ActiveTexture(GL_TEXTURE0);
  h->GetIntegerv(GL_TEXTURE_BINDING_2D, &s->texture);
  if (h->samplers)
    h->GetIntegerv(GL_SAMPLER_BINDING, &s->sampler);
  if (h->vao) {
    h->GetIntegerv(GL_VERTEX_ARRAY_BINDING, &s->vao);
  } else {
    for (GLuint i = 0; i < 3; i++) {
      h->GetVertexAttribiv(i, GL_VERTEX_ATTRIB_ARRAY_ENABLED,
                           &s->attrib[i].enabled);
      h->GetVertexAttribiv(i, GL_VERTEX_ATTRIB_ARRAY_SIZE, &s->attrib[i].size);
      h->GetVertexAttribiv(i, GL_VERTEX_ATTRIB_ARRAY_TYPE, &s->attrib[i].type);
      h->GetVertexAttribiv(i, GL_VERTEX_ATTRIB_ARRAY_NORMALIZED,
                           &s->attrib[i].normalized);
      h->GetVertexAttribiv(i, GL_VERTEX_ATTRIB_ARRAY_STRIDE,
                           &s->attrib[i].stride);
      h->GetVertexAttribiv(i, GL_VERTEX_ATTRIB_ARRAY_BUFFER_BINDING,
                           &s->attrib[i].buffer);
      h->GetVertexAttribPointerv(i, GL_VERTEX_ATTRIB_ARRAY_POINTER,
                                 &s->attrib[i].pointer);
      /* Attribute 0 has no current value to read in a compatibility
       * context (it is the vertex position). */
      if (i > 0)
        h->GetVertexAttribfv(i, GL_CURRENT_VERTEX_ATTRIB_,
                             s->attrib[i].current);
    }
  }
  if (h->split_fb) {
    h->GetIntegerv(GL_DRAW_FRAMEBUFFER_BINDING, &s->draw_fb);
    h->GetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &s->read_fb);
  } else if (h->fb) {
    h->GetIntegerv(GL_FRAMEBUFFER_BINDING, &s->draw_fb);
  }
  if (h->desktop) {
    h->GetIntegerv(GL_POLYGON_MODE, s->polygon_mode);
    s->srgb = h->IsEnabled(GL_FRAMEBUFFER_SRGB);
    s->logic_op = h->IsEnabled(GL_COLOR_LOGIC_OP);
  }
  if (h->clip_control) {
    h->GetIntegerv(GL_CLIP_ORIGIN, &s->clip_origin);
    h->GetIntegerv(GL_CLIP_DEPTH_MODE, &s->clip_depth);
  }
  if (h->compat)
    s->alpha_test = h->IsEnabled(GL_ALPHA_TEST);
  if (h->discard)
    s->discard = h->IsEnabled(GL_RASTERIZER_DISCARD);
  h->GetIntegerv(GL_VIEWPORT, s->viewport);
  h->GetIntegerv(GL_BLEND_SRC_RGB, &s->blend_src_rgb);
  h->GetIntegerv(GL_BLEND_DST_RGB, &s->blend_dst_rgb);
  h->GetIntegerv(GL_BLEND_SRC_ALPHA, &s->blend_src_a);
  h->GetIntegerv(GL_BLEND_DST_ALPHA, &s->blend_dst_a);
  h->GetIntegerv(GL_BLEND_EQUATION_RGB, &s->blend_eq_rgb);
  h->GetIntegerv(GL_BLEND_EQUATION_ALPHA, &s->blend_eq_a);
  h->GetBooleanv(GL_COLOR_WRITEMASK, s->color_mask);
  s->blend = h->IsEnabled(GL_BLEND);
  s->depth = h->IsEnabled(GL_DEPTH_TEST);
  s->stencil = h->IsEnabled(GL_STENCIL_TEST);
  s->cull = h->IsEnabled(GL_CULL_FACE);
  s->scissor = h->IsEnabled(GL_SCISSOR_TEST);
  s->a2c = h->IsEnabled(GL_SAMPLE_ALPHA_TO_COVERAGE);
  if (upload) {
    h->GetIntegerv(GL_UNPACK_ALIGNMENT, &s->unpack[0]);
    if (h->unpack_rows) {
      h->GetIntegerv(GL_UNPACK_ROW_LENGTH, &s->unpack[1]);
      h->GetIntegerv(GL_UNPACK_SKIP_ROWS, &s->unpack[2]);
      h->GetIntegerv(GL_UNPACK_SKIP_PIXELS, &s->unpack[3]);
      h->GetIntegerv(GL_UNPACK_IMAGE_HEIGHT, &s->unpack[4]);
      h->GetIntegerv(GL_UNPACK_SKIP_IMAGES, &s->unpack[5]);
    }
    if (h->pbo)
      h->GetIntegerv(GL_PIXEL_UNPACK_BUFFER_BINDING, &s->unpack_buffer);
  }
}

static void set_cap(const gp__gl_hud *h, GLenum cap, GLboolean on) {
  if (on)
    h->Enable(cap);
  else
    h->Disable(cap);
}

/* Puts back what save() read (the active texture unit last: the texture
 * and sampler bindings are the unit 0's). */
static void restore(const gp__gl_hud *h, const saved *s, bool upload) {
  if (upload) {
    h->PixelStorei(GL_UNPACK_ALIGNMENT, s->unpack[0]);
    if (h->unpack_rows) {
      h->PixelStorei(GL_UNPACK_ROW_LENGTH, s->unpack[1]);
      h->PixelStorei(GL_UNPACK_SKIP_ROWS, s->unpack[2]);
      h->PixelStorei(GL_UNPACK_SKIP_PIXELS, s->unpack[3]);
      h->PixelStorei(GL_UNPACK_IMAGE_HEIGHT, s->unpack[4]);
      h->PixelStorei(GL_UNPACK_SKIP_IMAGES, s->unpack[5]);
    }
    if (h->pbo)
      h->BindBuffer(GL_PIXEL_UNPACK_BUFFER, (GLuint)s->unpack_buffer);
  }
  set_cap(h, GL_BLEND, s->blend);
  set_cap(h, GL_DEPTH_TEST, s->depth);
  set_cap(h, GL_STENCIL_TEST, s->stencil);
  set_cap(h, GL_CULL_FACE, s->cull);
  set_cap(h, GL_SCISSOR_TEST, s->scissor);
  set_cap(h, GL_SAMPLE_ALPHA_TO_COVERAGE, s->a2c);
  h->ColorMask(s->color_mask[0], s->color_mask[1], s->color_mask[2],
               s->color_mask[3]);
  h->BlendEquationSeparate((GLenum)s->blend_eq_rgb, (GLenum)s->blend_eq_a);
  h->BlendFuncSeparate((GLenum)s->blend_src_rgb, (GLenum)s->blend_dst_rgb,
                       (GLenum)s->blend_src_a, (GLenum)s->blend_dst_a);
  h->Viewport(s->viewport[0], s->viewport[1], s->viewport[2], s->viewport[3]);
  if (h->discard)
    set_cap(h, GL_RASTERIZER_DISCARD, s->discard);
  if (h->compat)
    set_cap(h, GL_ALPHA_TEST, s->alpha_test);
  if (h->clip_control)
    h->ClipControl((GLenum)s->clip_origin, (GLenum)s->clip_depth);
  if (h->desktop) {
    /* A core profile has one mode for both faces (GL_FRONT alone is an
     * error there); a compatibility program may have set two. */
    if (!h->compat || s->polygon_mode[0] == s->polygon_mode[1]) {
      h->PolygonMode(GL_FRONT_AND_BACK, (GLenum)s->polygon_mode[0]);
    } else {
      h->PolygonMode(GL_FRONT, (GLenum)s->polygon_mode[0]);
      h->PolygonMode(GL_BACK, (GLenum)s->polygon_mode[1]);
    }
    set_cap(h, GL_FRAMEBUFFER_SRGB, s->srgb);
    set_cap(h, GL_COLOR_LOGIC_OP, s->logic_op);
  }
  if (h->split_fb) {
    h->BindFramebuffer(GL_DRAW_FRAMEBUFFER, (GLuint)s->draw_fb);
    h->BindFramebuffer(GL_READ_FRAMEBUFFER, (GLuint)s->read_fb);
  } else if (h->fb) {
    h->BindFramebuffer(GL_FRAMEBUFFER, (GLuint)s->draw_fb);
  }
  if (h->vao) {
    h->BindVertexArray((GLuint)s->vao);
  } else {
    for (GLuint i = 0; i < 3; i++) {
      h->BindBuffer(GL_ARRAY_BUFFER, (GLuint)s->attrib[i].buffer);
      h->VertexAttribPointer(i, s->attrib[i].size, (GLenum)s->attrib[i].type,
                             (GLboolean)s->attrib[i].normalized,
                             s->attrib[i].stride, s->attrib[i].pointer);
      if (s->attrib[i].enabled)
        h->EnableVertexAttribArray(i);
      else
        h->DisableVertexAttribArray(i);
      if (i > 0)
        h->VertexAttrib4fv(i, s->attrib[i].current);
    }
  }
  h->BindBuffer(GL_ARRAY_BUFFER, (GLuint)s->array_buffer);
  if (h->samplers)
    h->BindSampler(0, (GLuint)s->sampler);
  h->BindTexture(GL_TEXTURE_2D, (GLuint)s->texture);
  h->ActiveTexture((GLenum)s->active_texture);
  h->UseProgram((GLuint)s->program);
}

/* ------------------------------------------------------------------ */
/* Program, buffer, font                                                */

static const char vs_body[] =
    "VS_IN vec2 a_pos;\n"
    "VS_IN vec2 a_uv;\n"
    "VS_IN vec4 a_color;\n"
    "uniform vec2 u_scale;\n"
    "VS_OUT vec2 v_uv;\n"
    "VS_OUT vec4 v_color;\n"
    "void main() {\n"
    "  v_uv = a_uv;\n"
    "  v_color = a_color;\n"
    "  gl_Position = vec4(a_pos.x * u_scale.x - 1.0,\n"
    "                     1.0 - a_pos.y * u_scale.y, 0.0, 1.0);\n"
    "}\n";

static const char fs_body[] =
    "uniform sampler2D u_font;\n"
    "FS_IN vec2 v_uv;\n"
    "FS_IN vec4 v_color;\n"
    "void main() {\n"
    "  FRAG = v_color * vec4(1.0, 1.0, 1.0, TEX(u_font, v_uv).a);\n"
    "}\n";

/* The lines before a shader's body: the GLSL version of the context and
 * the words that differ between GLSL 1.10/ES 1.00 and 1.30 on. */
static void prelude(const gp__gl_hud *h, int major, int minor, bool fragment,
                    char *buf, size_t size) {
  int v = major * 10 + minor;
  const char *version = h->es     ? (major >= 3 ? "300 es" : "100")
                        : v >= 32 ? "150"
                        : v >= 30 ? "130"
                                  : "110";
  bool modern = h->es ? major >= 3 : v >= 30;
  snprintf(buf, size,
           "#version %s\n%s"
           "#define VS_IN %s\n#define VS_OUT %s\n#define FS_IN %s\n"
           "#define TEX %s\n%s",
           version, h->es && fragment ? "precision mediump float;\n" : "",
           modern ? "in" : "attribute", modern ? "out" : "varying",
           modern ? "in" : "varying", modern ? "texture" : "texture2D",
           !fragment ? ""
           : modern  ? "out vec4 o_color;\n#define FRAG o_color\n"
                     : "#define FRAG gl_FragColor\n");
}

static GLuint shader(const gp__gl_hud *h, GLenum type, const char *pre,
                     const char *body) {
  GLuint s = h->CreateShader(type);
  const char *src[2] = {pre, body};
  GLint ok = 0;
  h->ShaderSource(s, 2, src, NULL);
  h->CompileShader(s);
  h->GetShaderiv(s, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    char log[512] = "";
    h->GetShaderInfoLog(s, sizeof(log), NULL, log);
    fprintf(stderr, "gpuperf: GL HUD: shader not compiled: %s\n", log);
    h->DeleteShader(s);
    return 0;
  }
  return s;
}

static bool make_program(gp__gl_hud *h, int major, int minor) {
  char pre[256];
  prelude(h, major, minor, false, pre, sizeof(pre));
  GLuint vs = shader(h, GL_VERTEX_SHADER, pre, vs_body);
  prelude(h, major, minor, true, pre, sizeof(pre));
  GLuint fs = vs ? shader(h, GL_FRAGMENT_SHADER, pre, fs_body) : 0;
  if (!fs) {
    if (vs)
      h->DeleteShader(vs);
    return false;
  }
  h->prog = h->CreateProgram();
  h->AttachShader(h->prog, vs);
  h->AttachShader(h->prog, fs);
  h->BindAttribLocation(h->prog, 0, "a_pos");
  h->BindAttribLocation(h->prog, 1, "a_uv");
  h->BindAttribLocation(h->prog, 2, "a_color");
  h->LinkProgram(h->prog);
  h->DeleteShader(vs); /* flagged: they go with the program */
  h->DeleteShader(fs);
  GLint ok = 0;
  h->GetProgramiv(h->prog, GL_LINK_STATUS, &ok);
  if (!ok) {
    char log[512] = "";
    h->GetProgramInfoLog(h->prog, sizeof(log), NULL, log);
    fprintf(stderr, "gpuperf: GL HUD: program not linked: %s\n", log);
    return false;
  }
  h->u_scale = h->GetUniformLocation(h->prog, "u_scale");
  h->u_font = h->GetUniformLocation(h->prog, "u_font");
  return true;
}

/* The font texture: white texels, the glyphs' bits in alpha. False when
 * its pixels cannot be allocated. */
static bool make_font(gp__gl_hud *h) {
  uint8_t(*px)[FONT_W][4] = calloc(FONT_H, sizeof(*px));
  if (!px)
    return false;
  for (int c = 32; c < 128; c++) {
    int cx = (c % 16) * 8, cy = (c / 16) * 8;
    for (int r = 0; r < 8; r++)
      for (int k = 0; k < 8; k++) {
        bool on = c == SOLID       ? true
                  : r < 7 && k < 5 ? (font[c - 32] >> (5 * (6 - r) + 4 - k)) & 1
                                   : false;
        memset(px[cy + r][cx + k], 255, 3);
        px[cy + r][cx + k][3] = on ? 255 : 0;
      }
  }
  h->GenTextures(1, &h->tex);
  h->BindTexture(GL_TEXTURE_2D, h->tex);
  h->TexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  h->TexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  h->TexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  h->TexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  h->PixelStorei(GL_UNPACK_ALIGNMENT, 4);
  if (h->unpack_rows) {
    h->PixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    h->PixelStorei(GL_UNPACK_SKIP_ROWS, 0);
    h->PixelStorei(GL_UNPACK_SKIP_PIXELS, 0);
    h->PixelStorei(GL_UNPACK_IMAGE_HEIGHT, 0);
    h->PixelStorei(GL_UNPACK_SKIP_IMAGES, 0);
  }
  if (h->pbo)
    h->BindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
  h->TexImage2D(GL_TEXTURE_2D, 0, GL_RGBA, FONT_W, FONT_H, 0, GL_RGBA,
                GL_UNSIGNED_BYTE, px);
  free(px);
  return true;
}

/* The vertex layout of the HUD's buffer, into the bound vertex array (or
 * the program's arrays 0 to 2, saved, where there is none). */
static void attach_arrays(const gp__gl_hud *h) {
  h->BindBuffer(GL_ARRAY_BUFFER, h->vbo);
  h->VertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, sizeof(vertex),
                         (void *)offsetof(vertex, x));
  h->VertexAttribPointer(1, 2, GL_FLOAT, GL_FALSE, sizeof(vertex),
                         (void *)offsetof(vertex, u));
  h->VertexAttribPointer(2, 4, GL_UNSIGNED_BYTE, GL_TRUE, sizeof(vertex),
                         (void *)offsetof(vertex, rgba));
  for (GLuint i = 0; i < 3; i++)
    h->EnableVertexAttribArray(i);
}

static bool has_extension(const gp__gl_hud *h, const char *name) {
  if (h->GetStringi) {
    GLint n = 0;
    h->GetIntegerv(GL_NUM_EXTENSIONS, &n);
    for (GLint i = 0; i < n; i++) {
      const char *e = (const char *)h->GetStringi(GL_EXTENSIONS, (GLuint)i);
      if (e && strcmp(e, name) == 0)
        return true;
    }
    return false;
  }
  const char *all = (const char *)h->GetString(GL_EXTENSIONS);
  size_t len = strlen(name);
  for (const char *p = all; p && (p = strstr(p, name)) != NULL; p += len)
    if ((p == all || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0'))
      return true;
  return false;
}

/* What this context has (see the top of the file). */
static void capabilities(gp__gl_hud *h, int major, int minor) {
  int v = major * 10 + minor;
  bool three = major >= 3;
  h->desktop = !h->es;
  h->vao = three;
  h->split_fb = three;
  h->fb = three || h->es || has_extension(h, "GL_ARB_framebuffer_object");
  h->samplers = h->es ? three : v >= 33;
  h->unpack_rows = h->es ? three : true;
  h->pbo = h->es ? three : v >= 21;
  h->discard = three;
  h->clip_control = !h->es && v >= 45 && h->ClipControl;
  if (h->es) {
    h->compat = false;
  } else if (v >= 32) {
    GLint mask = 0;
    h->GetIntegerv(GL_CONTEXT_PROFILE_MASK, &mask);
    h->compat = (mask & GL_CONTEXT_COMPATIBILITY_PROFILE_BIT) != 0;
  } else if (v == 31) {
    h->compat = has_extension(h, "GL_ARB_compatibility");
  } else if (v == 30) {
    GLint flags = 0;
    h->GetIntegerv(GL_CONTEXT_FLAGS, &flags);
    h->compat = (flags & GL_CONTEXT_FLAG_FORWARD_COMPATIBLE_BIT) == 0;
  } else {
    h->compat = true;
  }
}

/* See hud_gl.h. */
gp__gl_hud *gp__gl_hud_create(gp__gl_getproc getproc, bool es, int major,
                              int minor) {
  if (!getproc || major < 2)
    return NULL;
  gp__gl_hud *h = calloc(1, sizeof(*h));
  if (!h)
    return NULL;
  h->es = es;
  bool ok = true;
#define LOAD(T, N)                                                             \
  h->N = (PFNGL##T##PROC)getproc("gl" #N);                                     \
  ok = ok && h->N;
  GL_FUNCS(LOAD)
#undef LOAD
#define LOAD_OPT(T, N) h->N = (PFNGL##T##PROC)getproc("gl" #N);
  GL_FUNCS_OPT(LOAD_OPT)
#undef LOAD_OPT
  if (!ok)
    goto fail_free;
  if (major < 3)
    h->GetStringi = NULL; /* before 3.0 it may resolve yet not exist */
  capabilities(h, major, minor);
  if ((h->vao && (!h->GenVertexArrays || !h->BindVertexArray ||
                  !h->DeleteVertexArrays)) ||
      (h->fb && !h->BindFramebuffer) || (h->samplers && !h->BindSampler) ||
      (h->desktop && (!h->PolygonMode || !h->DrawBuffer)))
    goto fail_free;
  h->verts = malloc(MAX_VERTS * sizeof(vertex));
  if (!h->verts)
    goto fail_free;
  saved s;
  save(h, &s, true);
  if (!make_program(h, major, minor) || !make_font(h))
    goto fail_program;
  h->GenBuffers(1, &h->vbo);
  h->BindBuffer(GL_ARRAY_BUFFER, h->vbo);
  h->BufferData(GL_ARRAY_BUFFER, MAX_VERTS * sizeof(vertex), NULL,
                GL_DYNAMIC_DRAW);
  if (h->vao) {
    h->GenVertexArrays(1, &h->vao_id);
    h->BindVertexArray(h->vao_id);
    attach_arrays(h);
  }
  h->UseProgram(h->prog);
  h->Uniform1i(h->u_font, 0);
  restore(h, &s, true);
  return h;

fail_program:
  if (h->prog)
    h->DeleteProgram(h->prog);
  restore(h, &s, true);
  free(h->verts);
fail_free:
  free(h);
  return NULL;
}

/* See hud_gl.h. */
void gp__gl_hud_destroy(gp__gl_hud *h) {
  if (!h)
    return;
  if (h->vao)
    h->DeleteVertexArrays(1, &h->vao_id);
  h->DeleteBuffers(1, &h->vbo);
  h->DeleteTextures(1, &h->tex);
  h->DeleteProgram(h->prog);
  gp__gl_hud_abandon(h);
}

/* See hud_gl.h. */
void gp__gl_hud_abandon(gp__gl_hud *h) {
  if (!h)
    return;
  free(h->verts);
  free(h);
}

/* ------------------------------------------------------------------ */
/* Vertices                                                             */

/* Item colours, by place in the pane. */
static const uint8_t colors[][3] = {
    {0x5a, 0xe6, 0x5a}, {0xff, 0xd2, 0x3c}, {0x5a, 0xc8, 0xff},
    {0xff, 0x78, 0xc8}, {0xff, 0x96, 0x46}, {0xbe, 0x96, 0xff},
};

typedef struct builder {
  vertex *v;
  int n;
} builder;

static void vert(builder *b, float x, float y, float u, float v,
                 const uint8_t rgba[4]) {
  if (b->n >= MAX_VERTS)
    return; /* defensive: MAX_VERTS is the largest view's */
  vertex *o = &b->v[b->n++];
  o->x = x, o->y = y, o->u = u, o->v = v;
  memcpy(o->rgba, rgba, 4);
}

/* A quad with corners (x0,y0) (x1,y1) textured from texel rectangle
 * (u0,v0)-(u1,v1) (texels). */
static void quad(builder *b, float x0, float y0, float x1, float y1, float u0,
                 float v0, float u1, float v1, const uint8_t rgba[4]) {
  u0 /= FONT_W, u1 /= FONT_W, v0 /= FONT_H, v1 /= FONT_H;
  vert(b, x0, y0, u0, v0, rgba);
  vert(b, x1, y0, u1, v0, rgba);
  vert(b, x0, y1, u0, v1, rgba);
  vert(b, x1, y0, u1, v0, rgba);
  vert(b, x1, y1, u1, v1, rgba);
  vert(b, x0, y1, u0, v1, rgba);
}

static const float solid_u = (SOLID % 16) * 8 + 4,
                   solid_v = (SOLID / 16) * 8 + 4;

static void rect(builder *b, float x0, float y0, float x1, float y1,
                 const uint8_t rgba[4]) {
  quad(b, x0, y0, x1, y1, solid_u, solid_v, solid_u, solid_v, rgba);
}

/* A segment 1.5 pixels thick from (x0,y0) to (x1,y1). */
static void segment(builder *b, float x0, float y0, float x1, float y1,
                    const uint8_t rgba[4]) {
  float dx = x1 - x0, dy = y1 - y0;
  float len = dx * dx + dy * dy;
  if (len <= 0)
    return;
  float inv = 0.75f / __builtin_sqrtf(len), nx = -dy * inv, ny = dx * inv;
  float u = solid_u / FONT_W, v = solid_v / FONT_H;
  vert(b, x0 + nx, y0 + ny, u, v, rgba);
  vert(b, x1 + nx, y1 + ny, u, v, rgba);
  vert(b, x0 - nx, y0 - ny, u, v, rgba);
  vert(b, x1 + nx, y1 + ny, u, v, rgba);
  vert(b, x1 - nx, y1 - ny, u, v, rgba);
  vert(b, x0 - nx, y0 - ny, u, v, rgba);
}

/* Text at (x, y) (its cell's top left), at most max characters. */
static void text(builder *b, int x, int y, const char *s, int max,
                 const uint8_t rgba[4]) {
  for (int i = 0; s[i] && i < max; i++, x += 6) {
    unsigned c = (unsigned char)s[i];
    if (c <= 32 || c >= 127)
      continue; /* a space, or nothing the font has */
    float u = (float)((c % 16) * 8), v = (float)((c / 16) * 8);
    quad(b, (float)x, (float)y + 1, (float)x + 5, (float)y + 8, u, v, u + 5,
         v + 7, rgba);
  }
}

/* One pane: items [first, end) of view, its top at y. */
static void pane(builder *b, const gp_hud_view *view, uint32_t first,
                 uint32_t end, int y) {
  static const uint8_t bg[4] = {0, 0, 0, 160}, frame[4] = {140, 140, 140, 255},
                       white[4] = {255, 255, 255, 255};
  const int x = GP_GL_HUD_MARGIN, w = GP_GL_HUD_PANE_W, pad = GP_GL_HUD_PAD;
  int n = (int)(end - first), ph = gp__gl_hud_pane_height(n);
  rect(b, (float)x, (float)y, (float)(x + w), (float)(y + ph), bg);
  int gx = x + pad, gy = y + 2 * pad + n * GP_GL_HUD_LINE_H;
  int gw = w - 2 * pad, gh = GP_GL_HUD_GRAPH_H;
  rect(b, (float)gx, (float)gy, (float)(gx + gw), (float)gy + 1, frame);
  rect(b, (float)gx, (float)(gy + gh - 1), (float)(gx + gw), (float)(gy + gh),
       frame);
  rect(b, (float)gx, (float)gy, (float)gx + 1, (float)(gy + gh), frame);
  rect(b, (float)(gx + gw - 1), (float)gy, (float)(gx + gw), (float)(gy + gh),
       frame);
  for (uint32_t i = first; i < end; i++) {
    const gp_hud_view_item *it = &view->items[i];
    const uint8_t *c3 = colors[(i - first) % (sizeof(colors) / 3)];
    uint8_t color[4] = {c3[0], c3[1], c3[2], 255};
    char val[32];
    if (it->flags & GP_HUD_VIEW_HAVE)
      snprintf(val, sizeof(val), "%.4g", it->value);
    else
      snprintf(val, sizeof(val), "-");
    int vlen = (int)strlen(val), ty = y + pad + (int)(i - first) * 10;
    text(b, gx + 1, ty, it->name, LINE_CHARS - vlen - 1, color);
    text(b, gx + gw - 1 - vlen * 6, ty, val, vlen, white);
    /* The graph: newest at the right edge, one step per HUD period. */
    uint32_t nh =
        it->num_hist > GP_HUD_VIEW_HIST ? GP_HUD_VIEW_HIST : it->num_hist;
    double top = it->top > 0 ? it->top : 1;
    float step = (float)(gw - 3) / (GP_HUD_VIEW_HIST - 1);
    float px = 0, py = 0;
    for (uint32_t k = 0; k < nh; k++) {
      double f = it->hist[k] / top;
      f = f > 0 ? (f < 1 ? f : 1) : 0; /* NaN too: 0 */
      float qx = (float)(gx + gw - 2) - step * (float)(nh - 1 - k);
      float qy = (float)(gy + gh - 2) - (float)f * (float)(gh - 4);
      if (k)
        segment(b, px, py, qx, qy, color);
      else if (nh == 1)
        segment(b, qx - step, qy, qx, qy, color);
      px = qx, py = qy;
    }
  }
}

/* See hud_gl.h. */
void gp__gl_hud_extent(const gp_hud_view *view, int width, int height,
                       int rect4[4]) {
  memset(rect4, 0, 4 * sizeof(int));
  if (!view || view->num_items == 0 || width <= GP_GL_HUD_MARGIN ||
      height <= GP_GL_HUD_MARGIN)
    return;
  uint32_t n = view->num_items > GP_HUD_VIEW_MAX_ITEMS ? GP_HUD_VIEW_MAX_ITEMS
                                                       : view->num_items;
  int y = GP_GL_HUD_MARGIN;
  for (uint32_t i = 0; i < n;) {
    uint32_t end = i + 1;
    while (end < n && view->items[end].pane == view->items[i].pane)
      end++;
    y += gp__gl_hud_pane_height((int)(end - i)) + GP_GL_HUD_GAP;
    i = end;
  }
  y -= GP_GL_HUD_GAP;
  int x1 = GP_GL_HUD_MARGIN + GP_GL_HUD_PANE_W;
  rect4[0] = GP_GL_HUD_MARGIN;
  rect4[1] = GP_GL_HUD_MARGIN;
  rect4[2] = (x1 < width ? x1 : width) - GP_GL_HUD_MARGIN;
  rect4[3] = (y < height ? y : height) - GP_GL_HUD_MARGIN;
}

static int build(gp__gl_hud *h, const gp_hud_view *view) {
  builder b = {h->verts, 0};
  uint32_t n = view->num_items > GP_HUD_VIEW_MAX_ITEMS ? GP_HUD_VIEW_MAX_ITEMS
                                                       : view->num_items;
  int y = GP_GL_HUD_MARGIN;
  for (uint32_t i = 0; i < n && y < h->h;) {
    uint32_t end = i + 1;
    while (end < n && view->items[end].pane == view->items[i].pane)
      end++;
    pane(&b, view, i, end, y);
    y += gp__gl_hud_pane_height((int)(end - i)) + GP_GL_HUD_GAP;
    i = end;
  }
  return b.n;
}

/* See hud_gl.h. */
void gp__gl_hud_draw(gp__gl_hud *h, const gp_hud_view *view, int width,
                     int height) {
  if (!h || !view || view->num_items == 0 || width <= 0 || height <= 0)
    return;
  saved s;
  save(h, &s, false);
  if (h->vao)
    h->BindVertexArray(h->vao_id);
  else
    attach_arrays(h);
  h->BindBuffer(GL_ARRAY_BUFFER, h->vbo);
  if (!h->built || view->seq != h->seq || width != h->w || height != h->h) {
    h->w = width, h->h = height;
    h->nverts = build(h, view);
    h->BufferSubData(GL_ARRAY_BUFFER, 0,
                     (GLsizeiptr)((size_t)h->nverts * sizeof(vertex)),
                     h->verts);
    h->seq = view->seq;
    h->built = true;
  }
  if (h->split_fb)
    h->BindFramebuffer(GL_DRAW_FRAMEBUFFER, 0);
  else if (h->fb)
    h->BindFramebuffer(GL_FRAMEBUFFER, 0);
  /* The default framebuffer's back buffer, where the frame is. */
  GLint draw_buffer = GL_BACK;
  GLboolean doublebuffer = GL_FALSE;
  if (h->desktop) {
    h->GetIntegerv(GL_DRAW_BUFFER, &draw_buffer);
    h->GetBooleanv(GL_DOUBLEBUFFER, &doublebuffer);
    if (draw_buffer != GL_BACK && doublebuffer)
      h->DrawBuffer(GL_BACK);
    h->PolygonMode(GL_FRONT_AND_BACK, GL_FILL);
    h->Disable(GL_FRAMEBUFFER_SRGB);
    h->Disable(GL_COLOR_LOGIC_OP);
  }
  h->UseProgram(h->prog);
  h->Uniform2f(h->u_scale, 2.0f / (float)width, 2.0f / (float)height);
  h->BindTexture(GL_TEXTURE_2D, h->tex); /* unit 0: save() made it active */
  if (h->samplers)
    h->BindSampler(0, 0);
  if (h->compat)
    h->Disable(GL_ALPHA_TEST);
  if (h->discard)
    h->Disable(GL_RASTERIZER_DISCARD);
  if (h->clip_control)
    h->ClipControl(GL_LOWER_LEFT, GL_NEGATIVE_ONE_TO_ONE);
  h->Viewport(0, 0, width, height);
  h->Disable(GL_DEPTH_TEST);
  h->Disable(GL_STENCIL_TEST);
  h->Disable(GL_CULL_FACE);
  h->Disable(GL_SCISSOR_TEST);
  h->Disable(GL_SAMPLE_ALPHA_TO_COVERAGE);
  h->ColorMask(GL_TRUE, GL_TRUE, GL_TRUE, GL_TRUE);
  h->Enable(GL_BLEND);
  h->BlendEquationSeparate(GL_FUNC_ADD, GL_FUNC_ADD);
  h->BlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ONE,
                       GL_ONE_MINUS_SRC_ALPHA);
  h->DrawArrays(GL_TRIANGLES, 0, h->nverts);
  if (h->desktop && draw_buffer != GL_BACK && doublebuffer)
    h->DrawBuffer((GLenum)draw_buffer);
  restore(h, &s, false);
}
