// The rules for what goes with one message, with no DOM: the core's caps (core/chat/media.py),
// said here before a file is read, the name a pasted file gets, and sizes as people read them.

export const MAX_FILE = 8 * 1024 * 1024;
export const MAX_TOTAL = 10 * 1024 * 1024;
export const MAX_FILES = 10;

export function sizeLabel(n) {
  if (n < 1024) return `${n} B`;
  return n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

/** Why `file` ({name, size}) can't join `attachments`: {message, stop} (stop: no later file can), or null. */
export function refusal(attachments, file) {
  if (attachments.length >= MAX_FILES)
    return { message: `At most ${MAX_FILES} files go with one message.`, stop: true };
  if (file.size > MAX_FILE) return { message: tooBig(file.name, file.size), stop: false };
  const total = attachments.reduce((n, a) => n + a.size, 0) + file.size;
  if (total > MAX_TOTAL)
    return { message: `The files of one message may be at most ${sizeLabel(MAX_TOTAL)} together.`, stop: false };
  return null;
}

export const tooBig = (name, size) => `${name} is ${sizeLabel(size)}; a file may be at most ${sizeLabel(MAX_FILE)}.`;

/** A file's name, or for a pasted one without a name "pasted-N.<subtype>" (N counts from 1). */
export const fileName = (file, count) =>
  file.name || `pasted-${count + 1}.${(file.type.split("/")[1] || "bin").replace(/[^a-z0-9]/gi, "")}`;

/** How many bytes a base64 string holds. */
export const base64Size = (data) =>
  Math.floor((data.length * 3) / 4) - (data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0);
