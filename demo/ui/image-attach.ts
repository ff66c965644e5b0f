/**
 * The composer's image attachment: the "Attach image" button (a file picker) and pasting a picture from the
 * clipboard. The picture is decoded, downscaled to at most `MAX_SIDE` pixels on its longer side and kept as a JPEG
 * `data:` URL — the bounded form the conversation store keeps and the request sends as an `image_url` part. A file
 * that is not an image, or an image the request refused (a model loaded without its vision projector), is explained
 * in an inline note under the composer, never thrown.
 */

/** Longest side of a stored image, in pixels (gemma3's projector sees 896 × 896). */
const MAX_SIDE = 896;
const JPEG_QUALITY = 0.85;

/** The elements the attachment drives. */
export interface ImageAttachElements {
  readonly button: HTMLButtonElement;
  readonly input: HTMLInputElement;
  /** Where pasting an image attaches it (the message box). */
  readonly pasteTarget: HTMLElement;
  /** Shows the attached image (hidden when none). */
  readonly preview: HTMLElement;
  readonly thumb: HTMLImageElement;
  readonly remove: HTMLButtonElement;
  /** The inline note (role=alert) for refused files and images. */
  readonly note: HTMLElement;
}

/** The image waiting in the composer. */
export class ImageAttachment {
  private url: string | null = null;

  constructor(private readonly el: ImageAttachElements) {
    el.button.addEventListener('click', () => el.input.click());
    el.input.addEventListener('change', () => {
      const file = el.input.files?.[0];
      el.input.value = '';
      if (file) void this.attach(file);
    });
    el.pasteTarget.addEventListener('paste', (ev) => {
      const item = Array.from(ev.clipboardData?.items ?? []).find(
        (i) => i.kind === 'file' && i.type.startsWith('image/'),
      );
      const file = item?.getAsFile();
      if (!file) return; // text pastes as usual
      ev.preventDefault();
      void this.attach(file);
    });
    el.remove.addEventListener('click', () => {
      this.set(null);
      el.pasteTarget.focus();
    });
  }

  /** The attached image as a JPEG `data:` URL, or null. */
  get image(): string | null {
    return this.url;
  }

  /** Attaches `url` (a stored image, e.g. when editing a message), or clears the attachment. */
  set(url: string | null): void {
    this.url = url;
    this.el.preview.hidden = url === null;
    if (url === null) this.el.thumb.removeAttribute('src');
    else this.el.thumb.src = url;
    if (url !== null) this.showNote(null);
  }

  /** Shows `text` in the inline note (null hides it). */
  showNote(text: string | null): void {
    this.el.note.hidden = text === null;
    this.el.note.textContent = text ?? '';
  }

  /** Decodes and downscales `file`; a file that is not a readable image is refused with a note. */
  async attach(file: Blob & { readonly name?: string }): Promise<void> {
    const name = file.name ? `${file.name}` : 'The pasted file';
    if (!file.type.startsWith('image/')) {
      this.showNote(
        `${name} is not an image (${file.type || 'unknown type'}). Attach a PNG, JPEG, WebP or GIF picture.`,
      );
      return;
    }
    try {
      this.set(await downscaledJpeg(file));
    } catch {
      this.showNote(`${name} could not be read as an image. Attach a PNG, JPEG, WebP or GIF picture.`);
    }
  }
}

/** `file` decoded, scaled to fit `MAX_SIDE` (never up), as a JPEG `data:` URL. */
async function downscaledJpeg(file: Blob): Promise<string> {
  const bitmap = await createImageBitmap(file);
  try {
    const scale = Math.min(1, MAX_SIDE / Math.max(bitmap.width, bitmap.height));
    const canvas = document.createElement('canvas');
    canvas.width = Math.max(1, Math.round(bitmap.width * scale));
    canvas.height = Math.max(1, Math.round(bitmap.height * scale));
    const ctx = canvas.getContext('2d');
    if (!ctx) throw new Error('no 2d canvas');
    ctx.fillStyle = '#fff'; // transparent pixels become white, not black, in a JPEG
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    ctx.drawImage(bitmap, 0, 0, canvas.width, canvas.height);
    return canvas.toDataURL('image/jpeg', JPEG_QUALITY);
  } finally {
    bitmap.close();
  }
}
