import { useEffect, useMemo, useRef, useState } from 'react';
import { useInput, type Key } from 'ink';
import { completeSlash, completeSlashArgs } from '../commands.ts';
import type { Controller } from '../controller.ts';
import type { CommandInfo, SkillInfo } from '../../../main/protocol.ts';
import * as ed from '../editor.ts';
import { completePath } from '../files.ts';
import {
  completeMention,
  completePromptCommand,
  NO_OFFERS,
  parsePromptCommand,
  parseTemplateMention,
  type McpOffers,
} from '../mcp-offers.ts';

/**
 * Completions for the token at the cursor: `/command` and `/server:prompt` at the start, a
 * command's argument (a skill's name after `/skills `), `@server:uri` and `@path` anywhere, and `remote` — what a server
 * offers for the prompt argument being typed — otherwise.
 */
export const suggestionsFor = (
  editor: ed.EditorState,
  root: string,
  offers: McpOffers = NO_OFFERS,
  remote: string[] = [],
  custom: readonly CommandInfo[] = [],
  skills: readonly SkillInfo[] = [],
): string[] => {
  const argument = completeSlashArgs(editor.text, { skills });
  if (argument.length) return argument.slice(0, 8);
  if (editor.text.startsWith('/') && !/\s/.test(editor.text)) {
    const found = [
      ...completeSlash(editor.text, custom),
      ...completePromptCommand(editor.text, offers),
    ];
    return found.length === 1 && found[0] === editor.text ? [] : found;
  }
  const { token } = ed.currentToken(editor);
  const others = remote.filter((value) => value !== token);
  if (token.startsWith('@'))
    return [...others, ...completeMention(token, offers), ...completePath(root, token)].slice(0, 8);
  return others.slice(0, 8);
};

/**
 * The `completion/complete` request for what is being typed: a `/server:prompt` argument, or the
 * first variable of an `@server:` resource template (its values as whole mentions).
 */
const completionFor = (editor: ed.EditorState, offers: McpOffers) => {
  const command = parsePromptCommand(editor.text, offers);
  if (command?.current)
    return {
      params: {
        server: command.server,
        ref: { type: 'ref/prompt' as const, name: command.prompt.name },
        argument: command.current,
        context: command.args,
      },
      shape: (value: string) => value,
    };
  const mention = parseTemplateMention(ed.currentToken(editor).token, offers);
  if (!mention) return undefined;
  return {
    params: {
      server: mention.server,
      ref: { type: 'ref/resource' as const, uri: mention.template },
      argument: { name: mention.variable, value: mention.value },
    },
    shape: (value: string) => `${mention.prefix}${value}`,
  };
};

/** What a server offers for the argument or template variable being typed, asked as one types. */
const useArgumentCompletion = (actions: Controller, editor: ed.EditorState, offers: McpOffers) => {
  const { text } = editor;
  const [remote, setRemote] = useState<{ text: string; values: string[] }>({
    text: '',
    values: [],
  });
  useEffect(() => {
    const request = completionFor({ text, cursor: text.length }, offers);
    if (!request) return;
    let live = true;
    const timer = setTimeout(() => {
      void actions.complete(request.params).then((values) => {
        if (live) setRemote({ text, values: values.map(request.shape) });
      });
    }, 120);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [actions, text, offers]);
  return remote.text === text ? remote.values : [];
};

/** What a key that only edits does to the editor (moves, deletions, Ctrl chords); else undefined. */
const edited = (editor: ed.EditorState, input: string, key: Key): ed.EditorState | undefined => {
  if (key.leftArrow) return ed.moveBy(editor, -1);
  if (key.rightArrow) return ed.moveBy(editor, 1);
  if (key.home) return ed.home(editor);
  if (key.end) return ed.end(editor);
  if (key.backspace) return ed.backspace(editor);
  if (key.delete) return ed.deleteForward(editor);
  if (!key.ctrl) return undefined;
  if (input === 'a') return ed.home(editor);
  if (input === 'e') return ed.end(editor);
  if (input === 'u') return ed.killToStart(editor);
  if (input === 'w') return ed.killWord(editor);
  if (input === 'j') return ed.insert(editor, '\n');
  if (input === 'c') return ed.emptyEditor;
  if (input === 'd' && editor.text) return ed.deleteForward(editor);
  return editor; // another Ctrl chord: nothing
};

/** Up and Down through the input history, keeping what was being typed as the last entry. */
const useHistoryRecall = (
  actions: Controller,
  editor: ed.EditorState,
  setEditor: (editor: ed.EditorState) => void,
) => {
  const [historyIndex, setHistoryIndex] = useState<number | null>(null);
  const draft = useRef('');
  const recall = (direction: -1 | 1) => {
    const history = actions.history;
    if (direction < 0) {
      if (history.length === 0) return;
      if (historyIndex === null) draft.current = editor.text;
      const index = historyIndex === null ? history.length - 1 : Math.max(0, historyIndex - 1);
      setHistoryIndex(index);
      setEditor(ed.editorOf(history[index] ?? ''));
    } else if (historyIndex !== null) {
      const index = historyIndex + 1;
      setHistoryIndex(index >= history.length ? null : index);
      setEditor(ed.editorOf(index >= history.length ? draft.current : (history[index] ?? '')));
    }
  };
  return { recall, reset: () => setHistoryIndex(null) };
};

/** The editor with `choice` (Tab's, the first suggestion) in place of the token it completes. */
const completed = (editor: ed.EditorState, choice: string): ed.EditorState =>
  choice.startsWith('/')
    ? ed.editorOf(`${choice} `)
    : ed.replaceToken(editor, choice.endsWith('/') ? choice : `${choice} `);

/**
 * The input box's editor: as last rendered, and as the last key left it (`latest`), which is what
 * a key acts on. Keys read in one go (typed ahead while this thread was busy, or sent together by
 * the terminal) are handled before the next render: each must see the one before it.
 */
const useEditorState = () => {
  const [editor, setEditorState] = useState(ed.emptyEditor);
  const latest = useRef(editor);
  const setEditor = (next: ed.EditorState) => {
    latest.current = next;
    setEditorState(next);
  };
  return { editor, latest, setEditor };
};

/** Keys of the input box: editing, history, completion, Enter to send. */
export const useComposerKeys = (
  actions: Controller,
  root: string,
  isActive: boolean,
  offers: McpOffers = NO_OFFERS,
  custom: readonly CommandInfo[] = [],
  skills: readonly SkillInfo[] = [],
) => {
  const { editor, latest, setEditor } = useEditorState();
  const history = useHistoryRecall(actions, editor, setEditor);
  const remote = useArgumentCompletion(actions, editor, offers);
  const suggestions = useMemo(
    () => suggestionsFor(editor, root, offers, remote, custom, skills),
    [editor, root, offers, remote, custom, skills],
  );
  const suggestionsNow = (current: ed.EditorState) =>
    current === editor
      ? suggestions
      : suggestionsFor(current, root, offers, remote, custom, skills);

  const send = (text: string) => {
    setEditor(ed.emptyEditor);
    history.reset();
    void actions.submit(text);
  };

  useInput(
    (input, key) => {
      const editor = latest.current;
      if (key.return) {
        if (key.shift || key.meta) return setEditor(ed.insert(editor, '\n'));
        if (editor.text.slice(0, editor.cursor).endsWith('\\'))
          return setEditor(ed.insert(ed.backspace(editor), '\n'));
        const [first] = suggestionsNow(editor);
        if (first?.startsWith('/')) return send(first);
        if (editor.text.trim()) send(editor.text);
        return;
      }
      if (key.tab && key.shift) return void actions.cycleAgent();
      const choice = key.tab ? suggestionsNow(editor)[0] : undefined;
      if (choice) return setEditor(completed(editor, choice));
      if (key.upArrow)
        return ed.isOnFirstLine(editor) ? history.recall(-1) : setEditor(ed.moveLine(editor, -1));
      if (key.downArrow)
        return ed.isOnLastLine(editor) ? history.recall(1) : setEditor(ed.moveLine(editor, 1));
      const next = edited(editor, input, key);
      if (next) return setEditor(next);
      if (key.escape || key.meta || !input) return;
      // Typed ahead, then Enter, in one chunk (a slow terminal, tmux send-keys): text, then send.
      const lone = input.endsWith('\r') && input.indexOf('\r') === input.length - 1;
      const typed = ed.insert(editor, (lone ? input.slice(0, -1) : input).replace(/\r\n?/g, '\n'));
      if (lone && typed.text.trim()) send(typed.text);
      else setEditor(typed);
    },
    { isActive },
  );
  return { editor, suggestions };
};

/**
 * Keys that work whatever has focus: Esc cancels the turn, Ctrl-C cancels or (twice) exits,
 * Ctrl-D on an empty input exits, Ctrl-O expands tool results and reasoning.
 */
export const useGlobalKeys = (
  actions: Controller,
  opts: {
    inputEmpty: boolean;
    dialogOpen: boolean;
    exitArmed: boolean;
    setExitArmed: (armed: boolean) => void;
    toggleExpanded: () => void;
  },
) => {
  const { exitArmed, setExitArmed } = opts;
  useEffect(() => {
    if (!exitArmed) return;
    const timer = setTimeout(() => setExitArmed(false), 2000);
    return () => clearTimeout(timer);
  }, [exitArmed, setExitArmed]);
  useInput((input, key) => {
    if (key.escape && !opts.dialogOpen) {
      actions.cancel();
      return;
    }
    if (!key.ctrl) return;
    if (input === 'c') {
      if (actions.cancel()) return;
      if (!opts.inputEmpty) return; // the composer clears its text
      if (exitArmed) actions.exit();
      else setExitArmed(true);
    } else if (input === 'd' && opts.inputEmpty && !opts.dialogOpen) actions.exit();
    else if (input === 'o') opts.toggleExpanded();
  });
};
