import { stripVTControlCharacters } from 'node:util';

import type * as MarkdownEngine from './markdown-engine.ts';
import { mark } from '../../workers/shared/timeline.ts';

type Engine = typeof MarkdownEngine;

let engine: Engine | undefined;
let loading: Promise<Engine> | undefined;

/**
 * Loads the markdown renderer (marked, marked-terminal, highlight.js: the heaviest part of the UI)
 * in the background, so the first frame does not wait for it. Resolves once it is usable.
 */
export const preloadMarkdown = (): Promise<Engine> => {
  loading ??= import('./markdown-engine.ts').then((loaded) => {
    mark('markdown loaded');
    return (engine = loaded);
  });
  return loading;
};

/**
 * Markdown → terminal text once the renderer has loaded (see `preloadMarkdown`); until then the
 * text as it is. Without `color` every escape code is removed.
 */
export const renderMarkdown = (
  text: string,
  options: { width: number; color: boolean },
): string => {
  if (engine) return engine.renderMarkdown(text, options);
  void preloadMarkdown();
  const out = text.replace(/\n+$/, '');
  return options.color ? out : stripVTControlCharacters(out);
};
