/* A drag source for the gui tests: drops files on a window through the XDND protocol (version 5), as a file
 * manager does, so the app's glfwSetDropCallback path runs under Xvfb (xdotool cannot drag between
 * clients). Usage: qwenchat_xdnd_drop WINDOW_ID PATH...; exit 0 once the target sent XdndFinished, 1 when it
 * refused the drop or did not answer within 10 s.
 * Steps: own XdndSelection; XdndEnter (type text/uri-list); XdndPosition at the window's centre; on an
 * accepting XdndStatus, XdndDrop; answer the target's SelectionRequest with the file:// list; wait for
 * XdndFinished. */
#include <X11/Xatom.h>
#include <X11/Xlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>

static Display* dpy;
static Window source, target;

static void send_client(Atom type, long l1, long l2, long l3, long l4) {
  XEvent e;
  memset(&e, 0, sizeof e);
  e.xclient.type = ClientMessage;
  e.xclient.window = target;
  e.xclient.message_type = type;
  e.xclient.format = 32;
  e.xclient.data.l[0] = (long)source;
  e.xclient.data.l[1] = l1;
  e.xclient.data.l[2] = l2;
  e.xclient.data.l[3] = l3;
  e.xclient.data.l[4] = l4;
  XSendEvent(dpy, target, False, NoEventMask, &e);
  XFlush(dpy);
}

/* file:// URI of a path, bytes outside [A-Za-z0-9/._-] percent-encoded (RFC 8089 as file managers write). */
static void append_uri(char** list, size_t* len, const char* path) {
  size_t need = *len + 7 + 3 * strlen(path) + 3;
  *list = realloc(*list, need);
  *len += (size_t)sprintf(*list + *len, "file://");
  for (const unsigned char* p = (const unsigned char*)path; *p; ++p) {
    if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
        strchr("/._-", *p)) {
      (*list)[(*len)++] = (char)*p;
    } else {
      *len += (size_t)sprintf(*list + *len, "%%%02X", *p);
    }
  }
  *len += (size_t)sprintf(*list + *len, "\r\n");
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s WINDOW_ID PATH...\n", argv[0]);
    return 2;
  }
  dpy = XOpenDisplay(NULL);
  if (!dpy) {
    fprintf(stderr, "xdnd_drop: cannot open the display\n");
    return 1;
  }
  target = (Window)strtoul(argv[1], NULL, 0);
  char* list = NULL;
  size_t len = 0;
  for (int i = 2; i < argc; ++i) append_uri(&list, &len, argv[i]);
  const Atom aware = XInternAtom(dpy, "XdndAware", False);
  const Atom selection = XInternAtom(dpy, "XdndSelection", False);
  const Atom enter = XInternAtom(dpy, "XdndEnter", False);
  const Atom position = XInternAtom(dpy, "XdndPosition", False);
  const Atom status = XInternAtom(dpy, "XdndStatus", False);
  const Atom drop = XInternAtom(dpy, "XdndDrop", False);
  const Atom leave = XInternAtom(dpy, "XdndLeave", False);
  const Atom finished = XInternAtom(dpy, "XdndFinished", False);
  const Atom copy = XInternAtom(dpy, "XdndActionCopy", False);
  const Atom uri_list = XInternAtom(dpy, "text/uri-list", False);

  Atom type;
  int format;
  unsigned long n, after;
  unsigned char* data = NULL;
  if (XGetWindowProperty(dpy, target, aware, 0, 1, False, XA_ATOM, &type, &format, &n, &after, &data) !=
          Success ||
      n == 0) {
    fprintf(stderr, "xdnd_drop: window 0x%lx is not XdndAware\n", (unsigned long)target);
    return 1;
  }
  XFree(data);
  source = XCreateSimpleWindow(dpy, DefaultRootWindow(dpy), 0, 0, 1, 1, 0, 0, 0);
  XSetSelectionOwner(dpy, selection, source, CurrentTime);

  XWindowAttributes wa;
  XGetWindowAttributes(dpy, target, &wa);
  int x = 0, y = 0;
  Window child;
  XTranslateCoordinates(dpy, target, DefaultRootWindow(dpy), wa.width / 2, wa.height / 2, &x, &y, &child);
  send_client(enter, 5L << 24, (long)uri_list, 0, 0);
  send_client(position, 0, ((long)x << 16) | (y & 0xFFFF), CurrentTime, (long)copy);

  const int fd = ConnectionNumber(dpy);
  int dropped = 0;
  for (;;) {
    while (!XPending(dpy)) {
      fd_set set;
      FD_ZERO(&set);
      FD_SET(fd, &set);
      struct timeval tv = {10, 0};
      if (select(fd + 1, &set, NULL, NULL, &tv) <= 0) {
        fprintf(stderr, "xdnd_drop: no answer from the window within 10 s (%s)\n",
                dropped ? "after the drop" : "before the drop");
        return 1;
      }
    }
    XEvent e;
    XNextEvent(dpy, &e);
    if (e.type == ClientMessage && e.xclient.message_type == status && !dropped) {
      if (!(e.xclient.data.l[1] & 1)) {
        send_client(leave, 0, 0, 0, 0);
        fprintf(stderr, "xdnd_drop: the window refused the drop\n");
        return 1;
      }
      send_client(drop, 0, CurrentTime, 0, 0);
      dropped = 1;
    } else if (e.type == SelectionRequest) {
      XSelectionRequestEvent* r = &e.xselectionrequest;
      XEvent reply;
      memset(&reply, 0, sizeof reply);
      reply.xselection.type = SelectionNotify;
      reply.xselection.requestor = r->requestor;
      reply.xselection.selection = r->selection;
      reply.xselection.target = r->target;
      reply.xselection.time = r->time;
      reply.xselection.property = None;
      if (r->target == uri_list) {
        XChangeProperty(dpy, r->requestor, r->property, uri_list, 8, PropModeReplace, (unsigned char*)list,
                        (int)len);
        reply.xselection.property = r->property;
      }
      XSendEvent(dpy, r->requestor, False, NoEventMask, &reply);
      XFlush(dpy);
    } else if (e.type == ClientMessage && e.xclient.message_type == finished) {
      printf("dropped %d file(s)\n", argc - 2);
      return 0;
    }
  }
}
