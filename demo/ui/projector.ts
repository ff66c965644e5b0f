/**
 * Which vision projector (llama.cpp's mmproj GGUF) goes with a model URL: the catalogue's, else the one the model was
 * last loaded with (`?mmproj=`), remembered across reloads. Projector files sit in the model store next to the models
 * but are never opened as a chat model.
 */
import { CATALOGUE } from './catalogue';
import { loadProjectors, saveProjector } from './conversation-store';

let remembered: Record<string, string> = {};
const ready = loadProjectors().then(
  (r) => void (remembered = { ...r, ...remembered }),
  () => undefined,
);

/** The projector URL for model `url`, or null when it takes text only. */
export async function projectorFor(url: string): Promise<string | null> {
  await ready;
  return CATALOGUE.find((m) => m.url === url)?.mmproj?.url ?? remembered[url] ?? null;
}

/** Remembers `mmproj` as the projector of model `url`. */
export async function rememberProjector(url: string, mmproj: string): Promise<void> {
  await ready;
  remembered[url] = mmproj;
  await saveProjector(url, mmproj);
}

/** Whether `url` is a vision projector rather than a chat model (known as one, or named `…mmproj….gguf`). */
export async function isProjectorUrl(url: string): Promise<boolean> {
  await ready;
  if (CATALOGUE.some((m) => m.mmproj?.url === url) || Object.values(remembered).includes(url)) return true;
  return /mmproj[^/]*\.gguf$/i.test(decodeURIComponent(url.split(/[?#]/)[0]));
}
