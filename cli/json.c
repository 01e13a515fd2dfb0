/*
** json.c -- JSON string literals, for the --json report and the benchmark
** drivers' records.
*/
#include "cli.h"

#include <stdio.h>

/* The length of the valid UTF-8 sequence at s (1 to 4), or 0 if the bytes
** there are not one (a stray continuation byte, a truncated or overlong
** sequence, a surrogate, or beyond U+10FFFF). */
static int utf8_length(const unsigned char *s) {
  int len = s[0] < 0x80 ? 1 : s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3
          : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
  for (int k = 1; k < len; k++)
    if ((s[k] & 0xc0) != 0x80)
      return 0;
  if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
      (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
    return 0;
  return len;
}

/* A JSON string: valid UTF-8 copied, control characters escaped, and each
** byte that is not part of valid UTF-8 (a program's comment may hold any)
** replaced by U+FFFD, as decoders with errors="replace" do. */
void json_string(FILE *f, const char *s) {
  fputc('"', f);
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  while (*p) {
    int len = utf8_length(p);
    if (len == 0) {
      fputs("\\ufffd", f);
      p++;
    } else if (*p == '"' || *p == '\\') {
      fprintf(f, "\\%c", *p++);
    } else if (*p == '\n' || *p == '\t' || *p == '\r') {
      fprintf(f, "\\%c", *p == '\n' ? 'n' : *p == '\t' ? 't' : 'r');
      p++;
    } else if (*p < 0x20 || *p == 0x7f) {
      fprintf(f, "\\u%04x", *p++);
    } else {
      fwrite(p, 1, (size_t)len, f);
      p += len;
    }
  }
  fputc('"', f);
}
