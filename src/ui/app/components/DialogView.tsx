import type { Dialog, DialogAnswer } from '../state/types.ts';
import { ApprovalDialog } from './ApprovalDialog.tsx';
import { ElicitationForm } from './ElicitationForm.tsx';
import { SamplingDialog } from './SamplingDialog.tsx';
import { TrustDialog } from './TrustDialog.tsx';

interface DialogViewProps {
  dialog: Dialog;
  onAnswer: (id: string, answer: DialogAnswer) => void;
}

/** The dialog for whatever the engine (or the first-use check) asks. */
export const DialogView = ({ dialog, onAnswer }: DialogViewProps) => {
  switch (dialog.kind) {
    case 'approval':
      return (
        <ApprovalDialog
          key={dialog.id}
          ask={dialog.ask}
          onAnswer={(answer) => onAnswer(dialog.id, { kind: 'approval', answer })}
        />
      );
    case 'elicitation':
      return (
        <ElicitationForm
          key={dialog.id}
          server={dialog.server}
          elicitation={dialog.elicitation}
          onAnswer={(answer) => onAnswer(dialog.id, { kind: 'elicitation', answer })}
        />
      );
    case 'sampling':
      return (
        <SamplingDialog
          key={dialog.id}
          server={dialog.server}
          summary={dialog.summary}
          maxTokens={dialog.maxTokens}
          onAnswer={(approve) => onAnswer(dialog.id, { kind: 'sampling', approve })}
        />
      );
    case 'trust':
      return (
        <TrustDialog
          key={dialog.id}
          offer={dialog.offer}
          onAnswer={(trust) => onAnswer(dialog.id, { kind: 'trust', trust })}
        />
      );
  }
};
